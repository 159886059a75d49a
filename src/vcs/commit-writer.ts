// How GitVcs writes a commit. The workspace's first commit (each job's) is
// commit-tree's: git decides who commits (config, environment, its checks),
// and when it finds nobody the commit is made again as incrementum. Its
// author and committer lines, read back through cat-file, are then what the
// job's later commits carry, with the time now, written by the workspace's
// long-lived hash-object: no git process per commit. A workspace whose first
// commit held more than git's plain fields (the config signs commits, or
// names an encoding) stays on commit-tree.
import { commitTime, identOf, parseCommit } from './commit-object.js';
import type { WorkspaceBatch } from './git-batch.js';
import { git, GitError, type GitOptions } from './git-run.js';

const FALLBACK_IDENT = { name: 'incrementum', email: 'incrementum@localhost' };
/** What commit-tree says when no committer identity can be found. */
const NO_IDENT = /tell me who you are|unable to auto-detect email|empty ident|\bident\b/i;

export interface CommitWriterDeps {
  /** The workspace's long-lived git processes. */
  batch: (ws: string) => WorkspaceBatch;
  /** Options for a git command in the workspace (its link check). */
  opts: (ws: string, o: GitOptions) => GitOptions;
}

export class CommitWriter {
  /** Workspaces where git found no committer identity: their commits use FALLBACK_IDENT. */
  private readonly noIdent = new Set<string>();
  /** Who commits in each workspace, as its first commit-tree wrote them; 'commit-tree' to stay on it. */
  private readonly idents = new Map<string, { author: string; committer: string } | 'commit-tree'>();

  constructor(private readonly deps: CommitWriterDeps) {}

  /**
   * A commit of `tree` on `parents` with `message` (as is), by the
   * workspace's committer; `author`: the author line to keep (describe's),
   * and as GIT_AUTHOR_* for commit-tree.
   */
  async write(
    ws: string,
    tree: string,
    parents: string[],
    message: string,
    author?: { line: string | null; env: NodeJS.ProcessEnv },
  ): Promise<string> {
    const who = this.idents.get(ws);
    if (who && who !== 'commit-tree' && (!author || author.line)) {
      const now = commitTime();
      return this.deps
        .batch(ws)
        .writeCommit(
          `tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join('')}` +
            `author ${author?.line ?? `${who.author} ${now}`}\ncommitter ${who.committer} ${now}\n\n${message}`,
        );
    }
    const sha = await this.commitTree(ws, [tree, ...parents.flatMap((p) => ['-p', p])], message, author?.env);
    // Not from a commit whose author was given (describe's keeps the amended one's).
    if (!who && !author) {
      const made = await this.deps.batch(ws).contents(sha);
      const c = made?.type === 'commit' ? parseCommit(made.body) : null;
      const [a, m] = [identOf(c?.author ?? null), identOf(c?.committer ?? null)];
      this.idents.set(ws, c?.plain && a && m ? { author: a, committer: m } : 'commit-tree');
    }
    return sha;
  }

  /** Forgets who commits in `ws`: the next job asks commit-tree again (the config may have changed). */
  forget(ws: string): void {
    this.idents.delete(ws);
    this.noIdent.delete(ws);
  }

  /**
   * `git commit-tree <args> -F -` with `message`; where git finds no
   * committer identity (none configured), again with FALLBACK_IDENT, and so
   * from then on in that workspace: commits never fail on it.
   */
  private async commitTree(
    ws: string,
    args: string[],
    message: string,
    env: NodeJS.ProcessEnv = {},
  ): Promise<string> {
    const run = () =>
      git(
        ws,
        ['commit-tree', ...args, '-F', '-'],
        this.deps.opts(ws, {
          input: message,
          env: { ...(this.noIdent.has(ws) ? fallbackIdent() : {}), ...env },
        }),
      );
    try {
      return await run();
    } catch (err) {
      if (this.noIdent.has(ws) || !(err instanceof GitError) || !NO_IDENT.test(err.result.stderr)) throw err;
      this.noIdent.add(ws);
      return run();
    }
  }
}

/** The identity commits use where git finds none: the user's GIT_* variables where set, else incrementum's. */
function fallbackIdent(): NodeJS.ProcessEnv {
  return {
    GIT_AUTHOR_NAME: process.env.GIT_AUTHOR_NAME || FALLBACK_IDENT.name,
    GIT_AUTHOR_EMAIL: process.env.GIT_AUTHOR_EMAIL || FALLBACK_IDENT.email,
    GIT_COMMITTER_NAME: process.env.GIT_COMMITTER_NAME || FALLBACK_IDENT.name,
    GIT_COMMITTER_EMAIL: process.env.GIT_COMMITTER_EMAIL || FALLBACK_IDENT.email,
  };
}
