// What `ii doctor` checks. Each check says what it found and, when it fails,
// exactly what to do; none of them changes anything.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { UserError } from '../errors.js';
import { loadConfig } from '../job/config.js';
import { openStateStore } from '../state/index.js';

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
    const v = execFileSync('git', ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
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

/** The state dir exists or can be made, is writable, and its database opens and passes an integrity check. */
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
  try {
    const store = openStateStore({ dir, integrityCheck: true });
    store.close();
    return { name: 'state', ok: true, detail: `${dir} (database ok)` };
  } catch (err) {
    const msg = (err as Error).message;
    const [what, ...todo] = msg.split('\n');
    return { name: 'state', ok: false, detail: what ?? msg, fix: todo.join(' ') || 'See the message above.' };
  }
}

export function checkConfig(repoRoot: string | null): CheckResult {
  if (!repoRoot)
    return { name: 'config', ok: true, detail: 'not in a git repository: repository config not checked' };
  try {
    const c = loadConfig(repoRoot);
    const tests = c.job['test-commands'];
    if (tests.length === 0)
      return {
        name: 'config',
        ok: false,
        detail: 'no [job] test-commands',
        fix: 'Set [job] test-commands in incrementum.toml (`ii init` writes one, guessing them).',
      };
    return { name: 'config', ok: true, detail: `test commands: ${tests.join(', ')}` };
  } catch (err) {
    if (err instanceof UserError)
      return {
        name: 'config',
        ok: false,
        detail: err.message.split('\n')[0] ?? '',
        fix: err.message.split('\n').slice(1).join(' '),
      };
    throw err;
  }
}
