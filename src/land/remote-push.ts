// A landing's push of its target branch to the shared remote ([land] push,
// else [remote] push): by compare-and-swap, never a plain force. Where the
// remote's branch is is read once, before the rebase (it must be the local
// tip or behind it: the landing rebases onto the local branch); the push
// then holds a lease on that sha, so a machine that lands on the remote
// meanwhile makes this push fail, not vanish. The remote moves first and the
// local branch after it: a lost lease has changed nothing anywhere, and a
// local move that then fails puts the remote back (with a lease again).
import { landingRemote, type RemoteSpec } from '../model/remote.js';
import { databaseUrl } from '../state/open-async.js';
import { hasRemoteSync } from '../vcs/remote-config.js';
import type { LandInput } from './input.js';
import { LandRefused, short } from './plan.js';

/** Where the landing pushes, and where the remote's branch was when it began (null: it had none). */
export interface RemoteTarget {
  remote: RemoteSpec;
  expected: string | null;
}

type Input = Pick<LandInput, 'config' | 'repo' | 'job' | 'vcs'>;

/**
 * The remote landing's lease, read before anything is done; null when the
 * landing is local only. Refused (nothing changed) when the remote cannot
 * be asked or holds commits the local branch has not.
 */
export async function remoteTarget(input: Input, onto: string, tip: string): Promise<RemoteTarget | null> {
  const remote = landingRemote(input.config, databaseUrl() !== null, hasRemoteSync(input.repo.root));
  if (!remote) return null;
  const { root } = input.repo;
  const r = await input.vcs.remoteBranchTip(root, remote, onto);
  if (!r.ok)
    throw new LandRefused(
      `could not ask the remote ${remote.name} where ${onto} is, so nothing was changed:\n${r.detail}\n` +
        `Check the remote (git remote -v; [remote] name in incrementum.toml), or land on this clone only with [land] push = false.`,
      'remote',
    );
  if (r.sha && r.sha !== tip && !(await input.vcs.isAncestor(root, r.sha, tip)))
    throw new LandRefused(
      `${onto} on the remote ${remote.name} is at ${short(r.sha)}, which ${onto} here (${short(tip)}) does not contain: another machine landed or pushed there. Nothing was changed. ` +
        `Bring ${onto} up to date (git pull --ff-only ${remote.name} ${onto}), then run ii job land ${input.job.id} again.`,
      'remote',
    );
  return { remote, expected: r.sha };
}

/**
 * Moves the remote's branch to `next` if it is still where the landing found
 * it; refused when not. A push that fails otherwise (a timeout, a dropped
 * connection) may still have been taken: the remote is asked again, and the
 * landing goes on when it holds `next`; "nothing was changed" is said only
 * once the remote is seen where the landing found it.
 */
export async function pushLanded(input: Input, onto: string, next: string, t: RemoteTarget): Promise<void> {
  const p = await input.vcs.pushBranchWithLease(input.repo.root, t.remote, onto, next, t.expected);
  if (p.ok) return;
  if (p.lost)
    throw new LandRefused(
      `${onto} on the remote ${t.remote.name} moved while job ${input.job.id} was landing (${t.expected ? `it is no longer at ${short(t.expected)}` : 'it was created meanwhile'}: another machine landed or pushed). ` +
        `Nothing was changed, on the remote or here. Bring ${onto} up to date (git pull --ff-only ${t.remote.name} ${onto}), then run ii job land ${input.job.id} again.`,
      'remote',
    );
  // Bounded by the remote's timeout, as the push was.
  const now = await input.vcs.remoteBranchTip(input.repo.root, t.remote, onto);
  if (now.ok && now.sha === next) return; // taken, only its answer was lost: the local move follows
  const failed = `pushing ${onto} to the remote ${t.remote.name} failed:\n${p.detail}\n`;
  if (!now.ok)
    throw new LandRefused(
      failed +
        `Whether the remote took the push is not known: asking it again failed too (${now.detail.split('\n')[0]}). ` +
        `${onto} here is not moved and job ${input.job.id} is not landed. Once the remote answers, run git ls-remote ${t.remote.name} refs/heads/${onto}: ` +
        `at ${short(next)}, the landing is on the remote (bring ${onto} here up to date: git pull --ff-only ${t.remote.name} ${onto}); ` +
        `${t.expected ? `at ${short(t.expected)}` : 'absent'}, nothing was changed (run ii job land ${input.job.id} again).`,
      'remote',
    );
  if (now.sha === t.expected)
    throw new LandRefused(
      `${failed}The remote's ${onto} is still ${t.expected ? `at ${short(t.expected)}` : 'absent'}, so nothing was changed, on the remote or here. ` +
        `Fix what the remote said, or land on this clone only with [land] push = false.`,
      'remote',
    );
  throw new LandRefused(
    `${failed}The remote's ${onto} is now ${now.sha ? `at ${short(now.sha)}` : 'deleted'}: another machine landed or pushed, not this landing. ` +
      `Nothing was changed here. Bring ${onto} up to date (git pull --ff-only ${t.remote.name} ${onto}), then run ii job land ${input.job.id} again.`,
    'remote',
  );
}

/**
 * Puts the remote's branch back where the landing found it, after the local
 * move failed (the lease: only if it is still at `next`). A line to add to
 * the refusal when that could not be done, else null.
 */
export async function unpushLanded(
  input: Input,
  onto: string,
  next: string,
  t: RemoteTarget,
): Promise<string | null> {
  const p = await input.vcs.pushBranchWithLease(input.repo.root, t.remote, onto, t.expected, next);
  if (p.ok) return null;
  return `The remote ${t.remote.name}'s ${onto} was already moved to ${short(next)} and could not be put back (${p.lost ? 'it has moved again since' : p.detail.split('\n')[0]}): it holds the landed commits.`;
}
