// jobs/<id>/stop.json: why a job stopped and what to do next, left by
// whoever stopped it (the runner, an agent, a person, a wrapper script). The
// journal's next_action comes from it when present, and its reason fills the
// stop reason when the job record has none. Documented in the README.
//
//   { "reason": "the migration needs a decision from a person",
//     "next_action": { "title": "Pick a migration strategy",
//                      "command": "ii job retry 1a2b3c4d",
//                      "why": "both options are sketched in notes.jsonl" },
//     "written_at": "2026-01-01T00:00:00.000Z", "written_by": "agent" }
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { stopFile } from './files.js';

export const StopFile = z
  .object({
    reason: z.string().min(1).optional(),
    next_action: z
      .object({
        title: z.string().min(1),
        command: z.string().min(1).nullable().optional(),
        why: z.string().default(''),
      })
      .optional(),
    written_at: z.string().optional(),
    written_by: z.string().optional(),
  })
  .refine((s) => s.reason !== undefined || s.next_action !== undefined, {
    message: 'a stop file needs a reason or a next_action',
  });
export type StopFile = z.infer<typeof StopFile>;

/** Parses a stop file's text; a string saying what is wrong when it is not one. */
export function parseStopFile(text: string): StopFile | string {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return `not JSON (${(err as Error).message})`;
  }
  const r = StopFile.safeParse(raw);
  if (r.success) return r.data;
  return r.error.issues.map((i) => `${i.path.join('.') || 'stop file'}: ${i.message}`).join('; ');
}

/** Writes jobs/<id>/stop.json atomically (a reader never sees half a file). */
export function writeStopFile(stateDir: string, jobId: string, stop: StopFile): string {
  const path = stopFile(stateDir, jobId);
  const valid = StopFile.parse({ written_at: new Date().toISOString(), ...stop });
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(valid, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
  return path;
}
