// A revision read from the store (a job's commits, its base, a landing's
// target) as a git argument. In a shared store another machine wrote it, and
// git reads an argument that starts with "-" as an option wherever it comes:
// a commit recorded as "--output=/home/me/.bashrc" made `git diff` (ii job
// diff, the board's diff view) and `git log` write their output over that
// file. The runner records full commit ids and branch names, never such text.

import { UserError } from '../errors.js';

/**
 * `rev`, refused when git would read it as an option: a UserError, so the
 * person reads what is wrong and where it came from, not an internal error
 * and a stack.
 */
export function revArg(rev: string): string {
  if (rev.startsWith('-'))
    throw new UserError(
      `not a revision: ${JSON.stringify(rev.slice(0, 80))} (a job record names it, and git would read it as an option): ` +
        'nothing was run with it. ii never records such a commit or branch: the record was written outside ii, ' +
        'or by another machine sharing this store; check what writes to it.',
    );
  return rev;
}
