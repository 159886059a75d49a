// The check of a workspace's `.git` link that runs before every git command
// incrementum starts in a workspace (src/vcs/worktree-link.ts): once the link
// is known good, one small file read compared with the text found good; a
// new text is verified afresh (its git dir's own gitdir file read back).
// Both against the floor they are paid on top of: one `git rev-parse` spawn.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, round, sample } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { WorktreeLinks } = await import(join(root, 'dist', 'src', 'vcs', 'worktree-link.js'));
const { gitRaw } = await import(join(root, 'dist', 'src', 'vcs', 'git-run.js'));

/** Microseconds per call of `fn`, the median of `rounds` rounds of `n` calls. */
async function perCallUs(rounds, n, fn) {
  const ms = await sample(rounds, async () => {
    for (let i = 0; i < n; i++) await fn();
  });
  return (median(ms) * 1000) / n;
}

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-wtlink-'));
  try {
    const repo = join(tmp, 'repo');
    mkdirSync(repo);
    const git = (cwd, ...args) => execFileSync('git', args, { cwd, stdio: 'pipe' });
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    git(repo, 'add', 'a.txt');
    git(repo, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'a');
    const ws = join(tmp, 'state', 'workspaces', 'r', '1');
    git(repo, 'worktree', 'add', '-q', '-b', 'incrementum/ws-1', ws);
    const links = new WorktreeLinks();
    links.check(ws);
    const spawn = await perCallUs(5, 20, () => gitRaw(ws, ['rev-parse', '--verify', 'HEAD']));
    const warm = await perCallUs(5, 2000, () => links.check(ws));
    const cold = await perCallUs(5, 500, () => new WorktreeLinks().check(ws));
    return [
      { name: 'git rev-parse spawn', value: round(spawn, 0), unit: 'µs', goal: '(the floor)' },
      {
        name: 'link check, known link',
        value: round(warm, 1),
        unit: 'µs',
        floor: round(spawn, 0),
        ratio: round(warm / spawn, 4),
        goal: '< 0.01× (one small read per git call)',
      },
      {
        name: 'link check, new link verified',
        value: round(cold, 1),
        unit: 'µs',
        floor: round(spawn, 0),
        ratio: round(cold / spawn, 4),
        goal: '< 0.1× (once per workspace per process)',
      },
    ];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
