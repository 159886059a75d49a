// What `ii doctor` checks. Each check says what it found and, when it fails,
// exactly what to do; none of them changes anything.
import { gitSync } from '../vcs/git-run.js';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { UserError } from '../errors.js';
import { loadConfig } from '../job/config.js';
import type { Config } from '../model/config.js';
import { sandboxState } from '../proc/sandbox/sandbox.js';
import { checkStoreHeader, damageAdvice, dbFile, inspectStoreFile, openStateStore } from '../state/index.js';

export interface CheckResult {
  name: string;
  ok: boolean;
  /** What was found (a version, a path). */
  detail: string;
  /** What to do, when not ok. */
  fix?: string;
}

export function checkNode(version = process.versions.node): CheckResult {
  const major = Number(version.split('.')[0]);
  return major >= 24
    ? { name: 'node', ok: true, detail: `v${version}` }
    : {
        name: 'node',
        ok: false,
        detail: `v${version}`,
        fix: 'incrementum needs Node.js 24 or newer (node:sqlite). Install it, or run `npm install` in the incrementum checkout to get its pinned Node.',
      };
}

export function checkGit(): CheckResult {
  try {
    const r = gitSync(undefined, ['--version']);
    if (r.code !== 0) throw new Error(r.stderr);
    const v = r.stdout.trim();
    return { name: 'git', ok: true, detail: v };
  } catch {
    return {
      name: 'git',
      ok: false,
      detail: 'not found on PATH',
      fix: 'Install git (e.g. apt-get install git) and put it on PATH.',
    };
  }
}

/** The state dir exists or can be made, is writable, and its database passes SQLite's integrity check and opens. */
export function checkState(dir: string): CheckResult {
  try {
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    return {
      name: 'state',
      ok: false,
      detail: `${dir}: ${(err as Error).message}`,
      fix: 'Make the folder writable, or point XDG_STATE_HOME at a writable folder.',
    };
  }
  const db = dbFile(dir);
  if (existsSync(db)) {
    // Read-only: a damaged file is reported, not touched.
    let found: ReturnType<typeof inspectStoreFile>;
    try {
      checkStoreHeader(db);
      found = inspectStoreFile(db);
    } catch (err) {
      if (err instanceof UserError) return stateFailure(err.message);
      return {
        name: 'state',
        ok: false,
        detail: `${db} could not be checked: ${(err as Error).message}`,
        fix: 'Check its permissions; if another ii is busy with it, run ii doctor again.',
      };
    }
    if (found.problems || found.note) {
      const what = found.problems
        ? `integrity check failed: ${found.problems}`
        : `found damaged at ${found.note?.found_at} (${found.note?.what}), though an integrity check now passes`;
      return {
        name: 'state',
        ok: false,
        detail: `${db} is damaged: ${what}`,
        fix: [
          ...(found.problems ? [] : [`If you trust it again, delete ${db}-damaged to use it. Else:`]),
          ...damageAdvice(db).slice(0, 3),
        ].join('\n'),
      };
    }
  }
  try {
    const store = openStateStore({ dir });
    store.close();
    return { name: 'state', ok: true, detail: `${dir} (database ok)` };
  } catch (err) {
    return stateFailure((err as Error).message);
  }
}

function stateFailure(msg: string): CheckResult {
  const [what, ...todo] = msg.split('\n');
  return { name: 'state', ok: false, detail: what ?? msg, fix: todo.join('\n') || 'See the message above.' };
}

/**
 * The repository's config, loaded and checked; `config` is null when it
 * cannot be loaded, so later checks that need it say nothing rather than
 * report a second, misleading failure of the same cause.
 */
export function checkConfig(repoRoot: string): { result: CheckResult; config: Config | null } {
  let c: Config;
  try {
    c = loadConfig(repoRoot);
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    // The message's own lines stay lines: a TOML error's code frame is
    // unreadable squashed onto one.
    const lines = err.message.split('\n');
    const last = lines.at(-1) ?? '';
    const hasFix = lines.length > 1 && /^(Fix|Run|Set|Add|Use|Remove|Make|Check)\b/.test(last);
    return {
      config: null,
      result: {
        name: 'config',
        ok: false,
        detail: (hasFix ? lines.slice(0, -1) : lines).join('\n'),
        fix: hasFix
          ? last
          : err.message.startsWith('cannot read config')
            ? 'Make the file readable (check its permissions and owner), or move it aside.'
            : 'Fix the file at the place shown (`ii init --print` shows a commented example), or move it aside.',
      },
    };
  }
  const tests = c.job['test-commands'];
  if (tests.length === 0)
    return {
      config: c,
      result: {
        name: 'config',
        ok: false,
        detail: 'no [job] test-commands',
        fix: 'Set [job] test-commands in incrementum.toml (`ii init` writes one, guessing them).',
      },
    };
  const setup = c.workspace.setup;
  return {
    config: c,
    result: {
      name: 'config',
      ok: true,
      detail: `test commands: ${tests.join(', ')}` + (setup.length ? `; setup: ${setup.join(', ')}` : ''),
    },
  };
}

/**
 * Whether jobs run sandboxed here, and what that confines. Without one,
 * "auto" runs jobs as before (a finding, not a failure: the fix is in the
 * detail); "required" fails, as every job would.
 */
export function checkSandbox(config: Config, env: NodeJS.ProcessEnv = process.env): CheckResult {
  const s = sandboxState(config, env);
  if (s.mode === 'off' || s.probe.ok) return { name: 'sandbox', ok: true, detail: s.summary };
  if (s.mode === 'auto') return { name: 'sandbox', ok: true, detail: s.summary };
  return {
    name: 'sandbox',
    ok: false,
    detail: `[sandbox] mode = "required", and ${s.probe.reason}: no job can start`,
    fix: s.probe.fix,
  };
}
