// Whether bubblewrap runs here, making a user namespace as the job sandbox
// does: CI installs it (.ci/run), and the sandbox's tests run there; on a
// machine without it they are skipped, saying why.
import { execFileSync } from 'node:child_process';

export const bwrap = (() => {
  try {
    execFileSync('bwrap', ['--unshare-user', '--ro-bind', '/', '/', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export const noBwrapWhy =
  'bubblewrap is not installed or cannot make a user namespace here (apt install bubblewrap)';
