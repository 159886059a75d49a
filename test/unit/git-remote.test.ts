// GitVcs's remote steps (src/vcs/git-remote.ts) on real repositories: two
// clones ("machines") of one bare repository (the shared remote, a file
// path). A job's refs go to refs/incrementum/ only, as one atomic push;
// another clone fetches one job's refs and nothing else; a branch moves on
// the remote only by compare-and-swap; a hung remote is ended whole at the
// timeout; a URL's credentials never show in what is reported.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scrubRemoteText } from '../../src/vcs/git-remote.js';
import { GitVcs } from '../../src/vcs/git.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let bare: string;
let a: string;
let b: string;
const vcs = new GitVcs();
const origin = { name: 'origin', timeoutMs: 30_000 };

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

beforeEach(() => {
  tmp = tempDir('ii-git-remote-');
  a = join(tmp.path, 'a');
  mkdirSync(a);
  gitRepo(a);
});
afterEach(() => tmp.cleanup());

/** The bare remote made from A, and B cloned from it, as two machines would have them. */
function machines(): void {
  bare = join(tmp.path, 'shared.git');
  git(tmp.path, 'clone', '-q', '--bare', a, bare);
  git(a, 'remote', 'add', 'origin', bare);
  b = join(tmp.path, 'b');
  git(tmp.path, 'clone', '-q', bare, b);
}

/** A change with two iterations and a described head in A's repository, as the runner leaves them. */
async function changeIn(repo: string, text: string): Promise<{ id: string; head: string; first: string }> {
  const ws = join(tmp.path, `ws-${text}`);
  await vcs.addWorkspace(repo, ws, `incrementum/ws-${text}`, 'main');
  const id = await vcs.startChange(ws);
  writeFileSync(join(ws, 'f.txt'), `${text} 1\n`);
  const first = (await vcs.commitIteration(ws, 'one')).commit_id;
  writeFileSync(join(ws, 'f.txt'), `${text} 2\n`);
  await vcs.commitIteration(ws, 'two');
  const head = await vcs.describe(ws, `final ${text}`);
  return { id, head, first };
}

const remoteRefs = () =>
  git(bare, 'for-each-ref', '--format=%(refname) %(objectname)').split('\n').filter(Boolean).sort();

describe('pushChangeRefs / fetchChangeRefs', () => {
  it("pushes a change's base, iterations and head under refs/incrementum only; another clone fetches that job's refs alone", async () => {
    machines();
    const branchesBefore = git(bare, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads');
    const one = await changeIn(a, 'one');
    const other = await changeIn(a, 'other');
    expect(await vcs.pushChangeRefs(a, origin, [one.id])).toEqual({ ok: true });
    const refs = remoteRefs();
    expect(refs.filter((r) => r.startsWith('refs/incrementum/')).map((r) => r.split(' ')[0])).toEqual(
      ['1', '2', 'base', 'head'].map((l) => `refs/incrementum/changes/${one.id}/${l}`),
    );
    // The user's branches, and the workspace branches, are not pushed.
    expect(git(bare, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads')).toBe(branchesBefore);
    expect(refs).toContain(`refs/incrementum/changes/${one.id}/head ${one.head}`);

    // The head is rewritten (another iteration, described again): a push replaces it on the remote.
    const ws = join(tmp.path, 'ws-one');
    writeFileSync(join(ws, 'f.txt'), 'one 3\n');
    await vcs.commitIteration(ws, 'three');
    const head3 = await vcs.describe(ws, 'final three');
    expect(await vcs.pushChangeRefs(a, origin, [one.id])).toEqual({ ok: true });
    expect(remoteRefs()).toContain(`refs/incrementum/changes/${one.id}/head ${head3}`);
    const third = git(a, 'rev-parse', `refs/incrementum/changes/${one.id}/3`);
    expect(remoteRefs()).toContain(`refs/incrementum/changes/${one.id}/3 ${third}`);

    // Machine B lacks the commits, fetches the one job's refs, and has them; the other change stays out.
    expect(await vcs.missingCommits(b, [one.first, head3])).toEqual([one.first, head3]);
    expect(await vcs.pushChangeRefs(a, origin, [other.id])).toEqual({ ok: true });
    expect(await vcs.fetchChangeRefs(b, origin, [one.id])).toEqual({ ok: true });
    expect(await vcs.missingCommits(b, [one.first, head3, 'not-a-sha'])).toEqual(['not-a-sha']);
    expect(git(b, 'for-each-ref', '--format=%(refname)', 'refs/incrementum/')).not.toContain(other.id);
    expect(await vcs.missingCommits(b, [other.head])).toEqual([other.head]);
  });

  it('an unreachable remote is reported (never thrown), and a URL credential never shows', async () => {
    git(a, 'remote', 'add', 'origin', join(tmp.path, 'nowhere.git'));
    const one = await changeIn(a, 'x');
    const r = await vcs.pushChangeRefs(a, origin, [one.id]);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.detail).toMatch(/nowhere\.git/);
    const f = await vcs.fetchChangeRefs(a, { name: 'nope', timeoutMs: 30_000 }, [one.id]);
    expect(f.ok).toBe(false);
    expect(
      scrubRemoteText("fatal: unable to access 'https://user:s3cr3t-token@git.example/r.git/': 403"),
    ).toBe("fatal: unable to access 'https://[REDACTED]@git.example/r.git/': 403");
    expect(
      scrubRemoteText('https://ghp_abcdefabcdefabcdefabcdefabcdefabcdef12@github.com/o/r'),
    ).not.toContain('ghp_');
  });

  it('a remote that hangs is ended at the timeout, with everything it started', async () => {
    machines();
    const one = await changeIn(a, 'hang');
    // A second interval sleep adds up, unique to this run: how its process is found in ps.
    const marker = `0.${process.pid}${Date.now()}`;
    // receive-pack run as a command that never answers (a wedged server, a stuck ssh).
    git(a, 'config', 'remote.origin.receivepack', `sleep 300 ${marker} #`);
    const r = await vcs.pushChangeRefs(a, { name: 'origin', timeoutMs: 1_000 }, [one.id]);
    expect(r).toEqual({ ok: false, detail: 'timed out after 1s' });
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(marker) && !l.includes('ps -eo'));
    expect(left).toEqual([]);
  });
});

describe('remoteBranchTip / pushBranchWithLease', () => {
  it('moves the remote branch only from where the lease expects it; a lost lease changes nothing', async () => {
    machines();
    const main0 = git(a, 'rev-parse', 'main');
    expect(await vcs.remoteBranchTip(a, origin, 'main')).toEqual({ ok: true, sha: main0 });
    expect(await vcs.remoteBranchTip(a, origin, 'nope')).toEqual({ ok: true, sha: null });

    writeFileSync(join(a, 'a.txt'), 'a\n');
    git(a, 'add', 'a.txt');
    git(a, 'commit', '-qm', 'a');
    const main1 = git(a, 'rev-parse', 'main');
    // B lands meanwhile: the remote's main is no longer where A's lease says.
    writeFileSync(join(b, 'b.txt'), 'b\n');
    git(b, 'add', 'b.txt');
    git(b, 'commit', '-qm', 'b');
    git(b, 'push', '-q', 'origin', 'main');
    const fromB = git(b, 'rev-parse', 'main');
    const lost = await vcs.pushBranchWithLease(a, origin, 'main', main1, main0);
    expect(lost).toMatchObject({ ok: false, lost: true });
    expect(git(bare, 'rev-parse', 'main')).toBe(fromB);
    git(a, 'fetch', '-q', 'origin');

    // With the lease right, the push replaces exactly that sha (a rewind back to it, too: no plain force needed).
    expect(await vcs.pushBranchWithLease(a, origin, 'main', main1, fromB)).toEqual({ ok: true });
    expect(git(bare, 'rev-parse', 'main')).toBe(main1);
    expect(await vcs.pushBranchWithLease(a, origin, 'main', fromB, main1)).toEqual({ ok: true });
    expect(git(bare, 'rev-parse', 'main')).toBe(fromB);

    // A branch the remote has not: created only while it still has none; deleted with a lease too.
    expect(await vcs.pushBranchWithLease(a, origin, 'feature', main1, null)).toEqual({ ok: true });
    expect(git(bare, 'rev-parse', 'feature')).toBe(main1);
    expect(await vcs.pushBranchWithLease(a, origin, 'feature', main0, null)).toMatchObject({
      ok: false,
      lost: true,
    });
    expect(await vcs.pushBranchWithLease(a, origin, 'feature', null, main1)).toEqual({ ok: true });
    expect(await vcs.remoteBranchTip(a, origin, 'feature')).toEqual({ ok: true, sha: null });
    // Not a branch name: refused before git runs.
    expect(await vcs.pushBranchWithLease(a, origin, '--force', main1, null)).toMatchObject({
      ok: false,
      lost: false,
    });
  });
});

describe("the user's pre-push hook", () => {
  /** A pre-push hook in A that notes each run (the refs git gave it) and refuses when `refuse`. */
  function hook(refuse: boolean): string {
    const log = join(tmp.path, 'hook.log');
    const path = join(a, '.git', 'hooks', 'pre-push');
    writeFileSync(
      path,
      `#!/bin/sh\ncat >> "${log}"\n` +
        (refuse ? 'echo "pre-push: main is frozen today" >&2\nexit 1\n' : 'exit 0\n'),
    );
    chmodSync(path, 0o755);
    return log;
  }

  it("runs for a landing's push of the user's branch: a refusal changes nothing on the remote and says why", async () => {
    machines();
    const main0 = git(a, 'rev-parse', 'main');
    writeFileSync(join(a, 'a.txt'), 'a\n');
    git(a, 'add', 'a.txt');
    git(a, 'commit', '-qm', 'a');
    const main1 = git(a, 'rev-parse', 'main');
    const log = hook(true);
    const refused = await vcs.pushBranchWithLease(a, origin, 'main', main1, main0);
    expect(refused).toMatchObject({ ok: false, lost: false });
    expect(refused.ok ? '' : refused.detail).toContain('main is frozen today');
    expect(readFileSync(log, 'utf8')).toContain(`${main1} refs/heads/main ${main0}`);
    expect(git(bare, 'rev-parse', 'main')).toBe(main0);
    // A hook that agrees: the push goes through, the hook having seen it.
    hook(false);
    expect(await vcs.pushBranchWithLease(a, origin, 'main', main1, main0)).toEqual({ ok: true });
    expect(git(bare, 'rev-parse', 'main')).toBe(main1);
  });

  it("is skipped for incrementum's own refs/incrementum/ pushes", async () => {
    machines();
    const one = await changeIn(a, 'one');
    const log = hook(true);
    expect(await vcs.pushChangeRefs(a, origin, [one.id])).toEqual({ ok: true });
    expect(remoteRefs()).toContain(`refs/incrementum/changes/${one.id}/head ${one.head}`);
    expect(existsSync(log)).toBe(false);
  });
});
