// The one parser of session/update, fed a transcript the scripted agent
// recorded: the live session (a real AcpSession over an agent replaying the
// recording) and the transcript reader must see the same tool calls, with the
// title a later update gave the call and the kind only its announcement had.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent } from '../../src/agent/acp-session.js';
import { groupAlive } from '../../src/proc/group.js';
import { SessionUpdateParser } from '../../src/agent/session-update.js';
import type { AgentActivity } from '../../src/agent/types.js';
import { transcriptText } from '../../src/job-log/transcript-text.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'transcripts', 'scripted-tools.jsonl');
const REPLAY = join(ROOT, 'test', 'fixtures', 'replay-agent.mjs');
const entries = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as unknown);

/** The tool lines as the transcript reader prints them: a call when announced and when it ends. */
const TOOLS = [
  '  [edit] write (pending)',
  '  [edit] new.txt (completed)',
  '  [edit] edit (pending)',
  '  [edit] old.txt (completed)',
  '  [edit] edit old.txt (pending)',
  '  [edit] edit old.txt (failed)',
  '  [edit] write plain.txt (pending)',
  '  [edit] write plain.txt (completed)',
  '  [delete] delete plain.txt (in_progress)',
  '  [delete] delete plain.txt (completed)',
  '  [execute] bash (in_progress)',
  '  [execute] bash (completed)',
];
const toolLines = (lines: string[]) => lines.filter((l) => /^ {2}\[/.test(l));

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the session/update parser', () => {
  it('gives the live session and the transcript reader the same tools', async () => {
    expect(toolLines(transcriptText(entries(FIXTURE)))).toEqual(TOOLS);

    const t = tempDir('ii-parse-');
    cleanups.push(t.cleanup);
    const activity: AgentActivity[] = [];
    const live = join(t.path, 'live.jsonl');
    const s = await startAgent({
      agent: { name: 'replay', command: [process.execPath, REPLAY, FIXTURE], env: {} },
      cwd: t.path,
      transcriptPath: live,
      turnTimeoutMs: 30_000,
      onActivity: (a) => activity.push(a),
      stopGrace: { eofMs: 500, termMs: 500 },
    });
    const pid = s.pid!;
    cleanups.push(async () => {
      await s.close();
      expect(groupAlive(pid)).toBe(false);
    });
    const r = await s.prompt('replay');
    expect(r.text).toBe('Working on it.Done.');
    expect(s.usage().cost).toBe(0.25);
    const seen = activity.flatMap((a) =>
      a.kind === 'tool' && (a.announced || a.status === 'completed' || a.status === 'failed')
        ? [`  [${a.toolKind ?? 'tool'}] ${a.title}${a.status ? ` (${a.status})` : ''}`]
        : [],
    );
    expect(seen).toEqual(TOOLS);
    // The live session's own transcript reads back the same.
    await s.close();
    expect(toolLines(transcriptText(entries(live)))).toEqual(TOOLS);
    expect(activity.filter((a) => a.kind === 'plan')).toEqual([
      { kind: 'plan', entries: ['write new.txt', 'edit old.txt'] },
    ]);
  });

  it('keeps what an agent sends wrong out of the way', () => {
    const p = new SessionUpdateParser();
    expect(p.parse(null)).toBeNull();
    expect(p.parse({ update: 'x' })).toBeNull();
    expect(
      p.parse({ update: { sessionUpdate: 'agent_message_chunk', content: { type: 'image' } } }),
    ).toBeNull();
    expect(p.parse({ update: { sessionUpdate: 'usage_update', cost: { amount: -1 } } })).toBeNull();
    expect(p.parse({ update: { sessionUpdate: 'usage_update', cost: { amount: 1.5 } } })).toEqual({
      kind: 'cost',
      amount: 1.5,
    });
    // An update of a call never announced: its id stands for its title.
    expect(
      p.parse({ update: { sessionUpdate: 'tool_call_update', toolCallId: 7, status: 'failed' } }),
    ).toEqual({ kind: 'tool', id: '7', title: '7', status: 'failed', announced: false });
  });
});
