// The git implementation of Vcs. Workspaces are worktrees; a change is a
// single commit on the workspace branch carrying a `Change-Id:` trailer, its
// parent recorded under refs/incrementum/changes/<id>/base; every iteration's
// commit is kept at refs/incrementum/changes/<id>/<n> (and the latest at
// .../head), so replaced iterations stay diffable and survive gc. The change
// being worked on is a small file in the worktree's own git dir, so each
// workspace has its own and the user's checkout never sees it.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { UserError } from '../errors.js';
import { newChangeId, readChangeId, withChangeId } from './change-id.js';
import { git, gitRaw, GitError } from './git-run.js';
import type { FileStat, IterationCommit, LogEntry, Vcs } from './vcs.js';
import { PROTOCOL_FILES } from './vcs.js';

const CHANGE_FILE = 'incrementum-change';
export const CHANGE_REFS = 'refs/incrementum/changes';

/** Pathspecs leaving out the protocol files wherever they are. */
const EXCLUDE_PROTOCOL = PROTOCOL_FILES.map((f) => `:(exclude,glob)**/${f}`);
const PROTOCOL_GLOBS = PROTOCOL_FILES.map((f) => `:(glob)**/${f}`);
const isProtocolFile = (path: string): boolean =>
  (PROTOCOL_FILES as readonly string[]).includes(posix.basename(path));

export const changeRef = (changeId: string, leaf: string | number): string =>
  `${CHANGE_REFS}/${changeId}/${leaf}`;

const ALL_REFS = ['--branches', '--tags', '--remotes'];
const FALLBACK_IDENT = { name: 'incrementum', email: 'incrementum@localhost' };

export class GitVcs implements Vcs {
  private readonly identEnv = new Map<string, Promise<NodeJS.ProcessEnv>>();

  async root(cwd: string): Promise<string> {
    const dir = resolve(cwd);
    if (!existsSync(dir)) throw new UserError(`${dir} does not exist: run ii from inside a git checkout.`);
    const r = await run(dir, ['rev-parse', '--show-toplevel']);
    if (r.code !== 0 || !r.stdout.trim())
      throw new UserError(
        `${dir} is not inside a git repository (with a working tree): run ii from a git checkout, or create one with git init.`,
      );
    return r.stdout.trim();
  }

  async resolveBase(root: string, rev?: string): Promise<string> {
    if (!(await this.hasCommits(root)))
      throw new UserError(
        `the repository at ${root} has no commits yet, so there is no base revision to start from: make a first commit (git add -A && git commit -m initial), then run this again.`,
      );
    if (rev !== undefined) {
      const sha = await this.commitOf(root, rev);
      if (!sha)
        throw new UserError(
          `unknown revision '${rev}' in ${root}: pass --rev a branch, tag or commit that exists (git log --oneline --all lists them).`,
        );
      return sha;
    }
    const remotes = (await git(root, ['remote'])).split('\n').filter(Boolean);
    remotes.sort((a, b) => (a === 'origin' ? -1 : b === 'origin' ? 1 : a.localeCompare(b)));
    for (const remote of remotes) {
      const head = await run(root, ['symbolic-ref', '-q', `refs/remotes/${remote}/HEAD`]);
      const sha = head.code === 0 ? await this.commitOf(root, head.stdout.trim()) : null;
      if (sha) return sha;
    }
    for (const name of ['refs/heads/main', 'refs/heads/master']) {
      const sha = await this.commitOf(root, name);
      if (sha) return sha;
    }
    // No trunk by name: the oldest root commit of HEAD (or of anything).
    let roots = await run(root, ['rev-list', '--max-parents=0', 'HEAD']);
    if (roots.code !== 0 || !roots.stdout.trim())
      roots = await run(root, ['rev-list', '--max-parents=0', ...ALL_REFS]);
    return roots.stdout.trim().split('\n').at(-1)!;
  }

  async addWorkspace(root: string, path: string, branch: string, baseRev: string): Promise<void> {
    mkdirSync(dirname(path), { recursive: true });
    // --force: a registration left by a worktree whose directory vanished
    // must not block its path; -B: a leftover branch of the same name is reset.
    await withLockRetry(() =>
      git(root, ['worktree', 'add', '--quiet', '--force', '-B', branch, path, baseRev]),
    );
  }

  async resetWorkspace(path: string, branch: string, baseRev: string): Promise<void> {
    await git(path, ['checkout', '--quiet', '--force', '-B', branch, baseRev]);
    await git(path, ['reset', '--quiet', '--hard', baseRev]);
    await git(path, ['clean', '-ffdxq']);
    rmSync(await this.changeFile(path), { force: true });
  }

  async removeWorkspace(root: string, path: string): Promise<void> {
    let branch: string | null = null;
    if (existsSync(path)) {
      const b = await run(path, ['symbolic-ref', '-q', '--short', 'HEAD']);
      if (b.code === 0) branch = b.stdout.trim();
      const r = await run(root, ['worktree', 'remove', '--force', '--force', path]);
      if (r.code !== 0 && existsSync(path)) rmSync(path, { recursive: true, force: true });
    }
    await run(root, ['worktree', 'prune']);
    // Only our own workspace branches; the commits stay under refs/incrementum.
    if (branch?.startsWith('incrementum/ws-')) await run(root, ['branch', '-q', '-D', branch]);
  }

  head(ws: string): Promise<string> {
    return git(ws, ['rev-parse', '--verify', 'HEAD']);
  }

  async hasChanges(ws: string): Promise<boolean> {
    const out = await git(ws, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames']);
    return out
      .split('\0')
      .filter(Boolean)
      .some((entry) => !isProtocolFile(entry.slice(3)));
  }

  async startChange(ws: string): Promise<string> {
    const id = newChangeId();
    await git(ws, ['update-ref', changeRef(id, 'base'), await this.head(ws)]);
    writeFileSync(await this.changeFile(ws), `${id}\n`);
    return id;
  }

  async currentChangeId(ws: string): Promise<string | null> {
    try {
      return readFileSync(await this.changeFile(ws), 'utf8').trim() || null;
    } catch {
      return null;
    }
  }

  async commitIteration(ws: string, message: string): Promise<IterationCommit> {
    const id = (await this.currentChangeId(ws)) ?? (await this.startChange(ws));
    const base = await this.commitOf(ws, changeRef(id, 'base'));
    if (!base) throw new Error(`change ${id} has no base ref (${changeRef(id, 'base')})`);
    const done = await this.iterations(ws, id);
    const previous = done.length ? await git(ws, ['rev-parse', changeRef(id, done.at(-1)!)]) : base;
    // Stage the whole working copy, then take the protocol files out again
    // (an agent may have committed or staged them itself).
    await git(ws, ['add', '--all', '--', '.', ...EXCLUDE_PROTOCOL]);
    await git(ws, ['rm', '--cached', '--quiet', '--ignore-unmatch', '-r', '--', ...PROTOCOL_GLOBS]);
    const tree = await git(ws, ['write-tree']);
    const commit = await git(ws, ['commit-tree', tree, '-p', base, '-F', '-'], {
      input: withChangeId(message, id),
      env: await this.ident(ws),
    });
    const n = (done.at(-1) ?? 0) + 1;
    await git(ws, ['update-ref', changeRef(id, n), commit]);
    await git(ws, ['update-ref', changeRef(id, 'head'), commit]);
    // The index already holds `tree`, so a soft reset leaves the working copy
    // exactly as the agent left it.
    await git(ws, ['reset', '--quiet', '--soft', commit]);
    return { commit_id: commit, change_id: id, files: await this.changedFiles(ws, previous, commit) };
  }

  async describe(ws: string, message: string): Promise<string> {
    const headMessage = await git(ws, ['log', '-1', '--format=%B', 'HEAD']);
    const id = (await this.currentChangeId(ws)) ?? readChangeId(headMessage);
    if (!id) throw new Error(`no change to describe in ${ws}: start one first`);
    // --only without paths: amend the message, never what happens to be staged.
    await git(
      ws,
      [
        'commit',
        '--quiet',
        '--amend',
        '--only',
        '--allow-empty',
        '--no-verify',
        '--cleanup=whitespace',
        '-F',
        '-',
      ],
      { input: withChangeId(message, id), env: await this.ident(ws) },
    );
    const sha = await this.head(ws);
    await git(ws, ['update-ref', changeRef(id, 'head'), sha]);
    return sha;
  }

  async changedFiles(ws: string, from: string, to: string): Promise<FileStat[]> {
    const common = ['diff', '--no-renames', '--no-ext-diff', '-z'];
    const [numstat, names] = await Promise.all([
      git(ws, [...common, '--numstat', from, to]),
      git(ws, [...common, '--name-status', from, to]),
    ]);
    const counts = new Map<string, { additions: number; deletions: number }>();
    for (const rec of numstat.split('\0').filter(Boolean)) {
      const [a, d, ...rest] = rec.split('\t');
      // Binary files show "-": they count as 0 lines.
      counts.set(rest.join('\t'), { additions: Number(a) || 0, deletions: Number(d) || 0 });
    }
    const parts = names.split('\0');
    const files: FileStat[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const code = parts[i]!;
      const path = parts[i + 1]!;
      if (!code || isProtocolFile(path)) continue;
      const status = code === 'A' ? 'added' : code === 'D' ? 'removed' : 'modified';
      files.push({ path, status, ...(counts.get(path) ?? { additions: 0, deletions: 0 }) });
    }
    return files;
  }

  diff(ws: string, from: string, to: string): Promise<string> {
    return git(ws, ['diff', '--no-color', '--no-ext-diff', from, to, '--', '.', ...EXCLUDE_PROTOCOL]);
  }

  async log(ws: string, base: string, head: string): Promise<LogEntry[]> {
    const out = await git(ws, ['log', '--reverse', '--format=%H|%ct|%s', `${base}..${head}`]);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [sha, time, ...subject] = line.split('|');
        return { sha: sha!, time: Number(time), subject: subject.join('|') };
      });
  }

  // ─── helpers ────────────────────────────────────────────────────────────

  /** The full sha of `rev` as a commit, or null when it names none. */
  private async commitOf(cwd: string, rev: string): Promise<string | null> {
    const r = await run(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
    return r.code === 0 ? r.stdout.trim() : null;
  }

  /**
   * Whether any commit exists. Not `rev-list --all`: that includes the HEAD of
   * every worktree, and one being added by another process has no valid HEAD yet.
   */
  private async hasCommits(root: string): Promise<boolean> {
    if (await this.commitOf(root, 'HEAD')) return true;
    const r = await run(root, ['rev-list', '-n', '1', ...ALL_REFS]);
    return r.code === 0 && r.stdout.trim() !== '';
  }

  /** Iteration numbers recorded for a change, ascending. */
  private async iterations(ws: string, id: string): Promise<number[]> {
    const out = await git(ws, ['for-each-ref', '--format=%(refname)', `${CHANGE_REFS}/${id}/`]);
    return out
      .split('\n')
      .map((r) => r.slice(r.lastIndexOf('/') + 1))
      .filter((leaf) => /^\d+$/.test(leaf))
      .map(Number)
      .sort((a, b) => a - b);
  }

  private async changeFile(ws: string): Promise<string> {
    return join(await git(ws, ['rev-parse', '--absolute-git-dir']), CHANGE_FILE);
  }

  /** A committer identity when the user has none configured, so commits never fail on it. */
  private ident(ws: string): Promise<NodeJS.ProcessEnv> {
    let p = this.identEnv.get(ws);
    if (!p) {
      p = run(ws, ['var', 'GIT_COMMITTER_IDENT']).then((r) =>
        r.code === 0
          ? {}
          : {
              GIT_AUTHOR_NAME: process.env.GIT_AUTHOR_NAME || FALLBACK_IDENT.name,
              GIT_AUTHOR_EMAIL: process.env.GIT_AUTHOR_EMAIL || FALLBACK_IDENT.email,
              GIT_COMMITTER_NAME: process.env.GIT_COMMITTER_NAME || FALLBACK_IDENT.name,
              GIT_COMMITTER_EMAIL: process.env.GIT_COMMITTER_EMAIL || FALLBACK_IDENT.email,
            },
      );
      this.identEnv.set(ws, p);
    }
    return p;
  }
}

/** gitRaw, but a missing git binary is the user's to fix. */
async function run(cwd: string, args: string[]) {
  try {
    return await gitRaw(cwd, args);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && existsSync(cwd))
      throw new UserError('git is not installed or not on PATH: install git, then run this again.');
    throw err;
  }
}

/** Retries a git command that lost a race for one of the repo's lock files. */
async function withLockRetry<T>(fn: () => Promise<T>, tries = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= tries || !(err instanceof GitError) || !/\.lock\b|lock file/i.test(err.result.stderr))
        throw err;
      await new Promise((r) => setTimeout(r, 50 * i));
    }
  }
}

/** True when git ignores `path` (relative to `root`); a tracked file never counts as ignored. */
export async function gitIgnores(root: string, path: string): Promise<boolean> {
  return (await run(root, ['check-ignore', '-q', '--', path])).code === 0;
}
