import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
export const II = join(ROOT, 'bin', 'ii.js');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built `ii` in `cwd` with a private state dir; never through a shell. */
export function ii(
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; input?: string },
): RunResult {
  const r = spawnSync(process.execPath, [II, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, NO_COLOR: '1', ...opts.env },
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
