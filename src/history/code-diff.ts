// The code diff of an iteration for a person to read, for both `ii job diff`
// and the dashboard: streamed and cut to display limits in src/vcs
// (capped-diff.ts), so a 150 MB file neither fills memory nor a screen.
import type { CappedDiff, DiffLimits } from '../vcs/capped-diff.js';
import { GitVcs } from '../vcs/git.js';

/**
 * The diff from `from` to `to`, read in the first of `dirs` that has both
 * commits (a job's workspace may be gone; the repository keeps its refs).
 * Throws the last error when none has.
 */
export async function iterationCodeDiff(
  dirs: string[],
  from: string,
  to: string,
  limits?: DiffLimits,
): Promise<CappedDiff> {
  const vcs = new GitVcs();
  let lastErr: unknown = new Error('no repository to read the diff from');
  for (const dir of dirs) {
    try {
      return await vcs.diff(dir, from, to, limits);
    } catch (err) {
      lastErr = err;
    }
  }
  throw lastErr;
}
