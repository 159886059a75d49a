// GitVcs's side of RemoteVcs and RemoteLandingVcs (remote-vcs.ts): a job's
// refs pushed and fetched under refs/incrementum/changes/<id>/, never the
// user's branches; a landing's target branch pushed only by compare-and-swap.
// Every command runs from the repository root (the refs are the repository's,
// shared by its worktrees), bounded by the remote's timeout in a process group
// of its own (a timeout ends ssh or a remote helper with git), and what git
// says is shown with any URL's credentials taken out.
import type { RemoteSpec } from '../model/remote.js';
import { redact, REDACTED } from '../text/redact.js';
import { gitRaw, type GitResult } from './git-run.js';
import type { LeasePush, PushControl, RemoteOutcome, RemoteTip } from './remote-vcs.js';

const CHANGE_REFS = 'refs/incrementum/changes';
const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** A change id as change-id.ts makes them: a refspec built from anything else could name other refs. */
const CHANGE_ID = /^[0-9A-Za-z_-]+$/;

/**
 * git's words with any credentials in a URL removed: the user-info part of
 * `scheme://user:token@host` whole (a token is often the user name alone,
 * https://<token>@host), then what redact() knows.
 */
export function scrubRemoteText(text: string): string {
  return redact(text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, `$1${REDACTED}@`));
}

/** The change's refs, as a forced refspec onto the same names (the namespace is ours). */
function changeRefspecs(changeIds: readonly string[]): string[] {
  for (const id of changeIds)
    if (!CHANGE_ID.test(id)) throw new Error(`not a change id: ${JSON.stringify(id.slice(0, 80))}`);
  return [...new Set(changeIds)].map((id) => `+${CHANGE_REFS}/${id}/*:${CHANGE_REFS}/${id}/*`);
}

function remoteName(remote: RemoteSpec): string {
  // A name, never an option: --end-of-options comes before it as well.
  if (!remote.name || remote.name.startsWith('-')) throw new Error(`not a remote name: ${remote.name}`);
  return remote.name;
}

/** Runs a git command that talks to a remote: bounded, in its own process group. */
function talk(
  root: string,
  remote: RemoteSpec,
  args: string[],
  control: PushControl = {},
): Promise<GitResult> {
  return gitRaw(root, args, { timeoutMs: remote.timeoutMs, group: true, ...control });
}

/** What a failed command said, on one line or a few, credentials taken out. */
function detail(r: GitResult): string {
  const text = (r.stderr.trim() || r.stdout.trim() || `exit code ${r.code}`)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^(?:hint:|To )/.test(l))
    .slice(0, 6)
    .join('\n');
  return scrubRemoteText(text);
}

/**
 * One push; without --atomic again when the remote cannot do it (the refs are
 * then pushed one by one). `hooks`: whether the user's pre-push hook runs.
 * It does for the user's own branch (a landing): a hook that refuses refuses
 * the landing. Incrementum's refs/incrementum/ pushes skip it: they are ours,
 * made at every iteration, and a hook written for the user's branches
 * (tests, lint, "no force push") has no business judging them.
 */
async function push(
  root: string,
  remote: RemoteSpec,
  options: string[],
  refspecs: string[],
  hooks: 'run-hooks' | 'no-verify',
  control?: PushControl,
): Promise<GitResult> {
  const args = (atomic: boolean) => [
    'push',
    '--quiet',
    '--porcelain',
    ...(hooks === 'no-verify' ? ['--no-verify'] : []),
    '--no-recurse-submodules',
    ...(atomic ? ['--atomic'] : []),
    ...options,
    '--end-of-options',
    remoteName(remote),
    ...refspecs,
  ];
  const r = await talk(root, remote, args(true), control);
  if (r.code !== 0 && /does not support --atomic/i.test(r.stderr))
    return talk(root, remote, args(false), control);
  return r;
}

export async function pushChangeRefs(
  root: string,
  remote: RemoteSpec,
  changeIds: readonly string[],
  control?: PushControl,
): Promise<RemoteOutcome> {
  if (changeIds.length === 0) return { ok: true };
  try {
    const r = await push(root, remote, [], changeRefspecs(changeIds), 'no-verify', control);
    return r.code === 0 ? { ok: true } : { ok: false, detail: detail(r) };
  } catch (err) {
    return { ok: false, detail: scrubRemoteText((err as Error).message) };
  }
}

export async function missingCommits(root: string, commits: readonly string[]): Promise<string[]> {
  const asked = [...new Set(commits)];
  if (asked.length === 0) return [];
  // Anything not a full sha is missing by definition: it names no commit of a job.
  const shas = asked.filter((c) => FULL_SHA.test(c));
  const missing = asked.filter((c) => !FULL_SHA.test(c));
  if (shas.length === 0) return missing;
  const r = await gitRaw(root, ['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
    input: shas.map((s) => `${s}\n`).join(''),
  });
  const found = new Set(
    r.stdout
      .split('\n')
      .map((l) => l.split(' '))
      .filter(([, type]) => type === 'commit')
      .map(([sha]) => sha),
  );
  return [...missing, ...shas.filter((s) => !found.has(s))];
}

export async function fetchChangeRefs(
  root: string,
  remote: RemoteSpec,
  changeIds: readonly string[],
): Promise<RemoteOutcome> {
  if (changeIds.length === 0) return { ok: true };
  try {
    const r = await talk(root, remote, [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      '--no-auto-gc',
      '--end-of-options',
      remoteName(remote),
      ...changeRefspecs(changeIds),
    ]);
    return r.code === 0 ? { ok: true } : { ok: false, detail: detail(r) };
  } catch (err) {
    return { ok: false, detail: scrubRemoteText((err as Error).message) };
  }
}

/** A branch name as a ref: refused when it is not one (nothing is pushed under a name git would read otherwise). */
function branchRef(branch: string): string {
  if (!branch || branch.startsWith('-') || /[\s~^:?*[\\]|\.\.|@\{|\/\/|\.lock$|^\/|\/$/.test(branch))
    throw new Error(`not a branch name: ${JSON.stringify(branch.slice(0, 80))}`);
  return `refs/heads/${branch}`;
}

export async function remoteBranchTip(root: string, remote: RemoteSpec, branch: string): Promise<RemoteTip> {
  try {
    const ref = branchRef(branch);
    const r = await talk(root, remote, ['ls-remote', '--refs', '--end-of-options', remoteName(remote), ref]);
    if (r.code !== 0) return { ok: false, detail: detail(r) };
    // ls-remote matches the pattern at the end of any ref's name: only the exact one counts.
    const line = r.stdout.split('\n').find((l) => l.endsWith(`\t${ref}`));
    return { ok: true, sha: line ? line.slice(0, line.indexOf('\t')) : null };
  } catch (err) {
    return { ok: false, detail: scrubRemoteText((err as Error).message) };
  }
}

export async function pushBranchWithLease(
  root: string,
  remote: RemoteSpec,
  branch: string,
  commit: string | null,
  expected: string | null,
): Promise<LeasePush> {
  try {
    const ref = branchRef(branch);
    if ((commit !== null && !FULL_SHA.test(commit)) || (expected !== null && !FULL_SHA.test(expected)))
      throw new Error('a lease is given full commit ids only');
    // An empty expected value: the push happens only where the remote has no such branch.
    const r = await push(
      root,
      remote,
      [`--force-with-lease=${ref}:${expected ?? ''}`],
      [`${commit ?? ''}:${ref}`],
      'run-hooks',
    );
    if (r.code === 0) return { ok: true };
    // --porcelain: `!<tab>src:dst<tab>[rejected] (stale info)` when the lease did not hold.
    const lost = /\[rejected\] \(stale info\)|\(stale info\)/.test(r.stdout + r.stderr);
    return { ok: false, lost, detail: detail(r) };
  } catch (err) {
    return { ok: false, lost: false, detail: scrubRemoteText((err as Error).message) };
  }
}
