// incrementum.toml: where it is looked for, what it may hold, and errors that
// name the file and the key. Repo config wins over the user's, key by key.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { UserError } from '../errors.js';

const AgentSection = z
  .object({
    /** A preset name: opencode, claude, gemini, codex, scripted. */
    preset: z.string().min(1).optional(),
    /** argv of an ACP agent over stdio; wins over preset. */
    command: z.array(z.string().min(1)).min(1).optional(),
    env: z.record(z.string(), z.string()).default({}),
    /** Longest one prompt turn may take before it is cancelled. */
    'turn-timeout-seconds': z.number().positive().default(1800),
  })
  .strict();

const JobSection = z
  .object({
    'test-commands': z.array(z.string().min(1)).default([]),
    /** Iterations (commits) one change may take before the job fails. */
    'max-iterations': z.number().int().positive().default(8),
    /** Changes one job may make before it fails. */
    'max-changes': z.number().int().positive().default(10),
    'auto-commit': z.boolean().default(true),
    /** A test command running longer than this has its process group ended and fails. */
    'test-timeout-seconds': z.number().positive().default(1800),
    /**
     * Run the test commands once on the untouched base before the first
     * prompt: a project whose tests already fail stops the job before it
     * spends an agent turn (`--allow-failing-baseline` runs it anyway).
     */
    'baseline-tests': z.boolean().default(true),
  })
  .strict();

const WorkspaceSection = z
  .object({
    /** Files git ignores that a new workspace needs (e.g. ".env"), copied from the repo root. */
    copy: z.array(z.string().min(1)).default([]),
    /**
     * Commands (through a shell, in order) that make a new workspace able to
     * run the tests, e.g. ["npm ci"]; again whenever a lockfile changed.
     */
    setup: z.array(z.string().min(1)).default([]),
    /**
     * A setup command that is a package manager's install (npm ci, ...) is
     * replaced by the checkout's dependencies when the lockfiles match:
     * "clone" (copy-on-write where the filesystem can, else a copy),
     * "hardlink" (fastest; shares files with the checkout), or "off".
     */
    reuse: z.enum(['clone', 'hardlink', 'off']).default('clone'),
  })
  .strict();

const RunSection = z
  .object({
    /** Jobs `ii run` keeps running at once (--jobs wins). */
    jobs: z.number().int().positive().default(2),
    /** Failed or abandoned jobs after which `ii run` leaves a todo alone until `ii todo reopen`. */
    'max-attempts': z.number().int().positive().default(2),
  })
  .strict();

export const Config = z
  .object({
    agent: AgentSection.default(AgentSection.parse({})),
    job: JobSection.default(JobSection.parse({})),
    workspace: WorkspaceSection.default(WorkspaceSection.parse({})),
    run: RunSection.default(RunSection.parse({})),
  })
  .strict();
export type Config = z.infer<typeof Config>;

/** The config files that apply to a repo, most specific first; only those that exist. */
export function configFiles(repoRoot: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const repoFile = [join(repoRoot, 'incrementum.toml'), join(repoRoot, '.incrementum', 'config.toml')].find(
    (p) => existsSync(p),
  );
  const xdg =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.length > 0
      ? env.XDG_CONFIG_HOME
      : join(env.HOME || homedir(), '.config');
  const userFile = join(xdg, 'incrementum', 'config.toml');
  return [repoFile, existsSync(userFile) ? userFile : undefined].filter((p): p is string => p !== undefined);
}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Section-wise merge: a key in `over` replaces the same key in `base`. */
function merge(base: Table, over: Table): Table {
  const out: Table = { ...base };
  for (const [k, v] of Object.entries(over))
    out[k] = isTable(v) && isTable(out[k]) ? { ...(out[k] as Table), ...v } : v;
  return out;
}

function readToml(path: string): Table {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read config ${path}: ${(err as Error).message}`);
  }
  try {
    return parseToml(text) as Table;
  } catch (err) {
    throw new UserError(`config ${path} is not valid TOML: ${(err as Error).message}`);
  }
}

/** Loads and validates the config for a repo; defaults when there is no file. */
export function loadConfig(repoRoot: string, env: NodeJS.ProcessEnv = process.env): Config {
  const files = configFiles(repoRoot, env);
  // Validate each file on its own first, so an error names the file it is in.
  for (const f of files) check(f, readToml(f));
  const merged = files.reverse().reduce<Table>((acc, f) => merge(acc, readToml(f)), {});
  return Config.parse(merged);
}

function check(file: string, raw: Table): void {
  const r = Config.safeParse(raw);
  if (r.success) return;
  const lines = r.error.issues.map((i) => {
    const key = i.path.join('.');
    return `  ${key || '(top level)'}: ${i.message}`;
  });
  throw new UserError(
    `invalid config ${file}:\n${lines.join('\n')}\nFix the key(s) above; \`ii init\` writes a commented example.`,
  );
}
