// A workspace's `.git` is a one-line file, `gitdir: <the repository's
// .git>/worktrees/<name>`, and git follows it wherever it points. Whatever
// runs in the workspace (the agent's shell, a test command) can rewrite it: a
// `.git` repointed at the user's repository made incrementum's own commands
// commit onto the user's branch, switch their checkout and reset their index.
// So before each git command in a workspace the link is checked: it must name
// a worktree git dir outside the workspace whose own `gitdir` file names this
// workspace back (git keeps that pair for every worktree it adds, and nothing
// confined to the workspace can make one). Once a link is found good its text
// is remembered, so the check per command is one small file read compared
// with that text; another text is checked afresh. The git dir it leads to is
// then given to git (--git-dir, --work-tree): a link rewritten between the
// check and git starting is never followed.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  readSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UserError } from '../errors.js';

/** The workspace's `.git` no longer leads to its own worktree git dir: no git may run there. */
export class WorkspaceRedirected extends UserError {
  constructor(
    readonly workspace: string,
    readonly found: string,
  ) {
    super(
      `the workspace's .git (${join(workspace, '.git')}) no longer points at its own worktree git dir: ${found}. ` +
        'Something running in the workspace (the agent, or a command it or the tests ran) changed it; ' +
        'no git command was run there after that, so whatever it points at now is untouched. ' +
        "The job's commits so far are kept under refs/incrementum/; the workspace is made afresh for the next job.",
    );
    this.name = 'WorkspaceRedirected';
  }
}

/**
 * The worktree's HEAD, or its own branch's loose ref, is no longer a regular
 * file (a FIFO, a socket, a device, a link, a directory): git would block or
 * misread it, so no git may run there (it is refused as a repointed link is).
 */
export class WorkspaceGitFileReplaced extends WorkspaceRedirected {
  constructor(workspace: string, file: string, what: string) {
    super(workspace, what);
    this.message =
      `the workspace's git file ${file} is no longer a regular file (it is now ${what}). ` +
      'Something running in the workspace (the agent, or a command it or the tests ran) replaced it; ' +
      'no git command was run there after that (git would hang or misread it). ' +
      "The job's commits so far are kept under refs/incrementum/; the workspace is made afresh for the next job.";
    this.name = 'WorkspaceGitFileReplaced';
  }
}

/** What a path is, for a message: only called on one that is not a regular file. */
function kindOf(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** A link git wrote is one short line; anything longer is not one. */
const MAX_LINK = 4096;
const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;
/** Reused: the read is synchronous, so no two checks share it at once. */
const buf = Buffer.allocUnsafe(MAX_LINK + 1);

type DotGit = { kind: 'file'; text: string } | { kind: 'dir' } | { kind: 'missing' } | { kind: 'other' };

/** `<dir>/.git` as it is, following no link (a link is `other`). */
function readDotGit(dir: string): DotGit {
  let fd: number;
  try {
    fd = openSync(join(dir, '.git'), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? { kind: 'missing' } : { kind: 'other' };
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) return { kind: 'dir' };
    if (!st.isFile() || st.size > MAX_LINK) return { kind: 'other' };
    const n = readSync(fd, buf, 0, buf.length, 0);
    return n > MAX_LINK ? { kind: 'other' } : { kind: 'file', text: buf.toString('utf8', 0, n) };
  } finally {
    closeSync(fd);
  }
}

/**
 * The loose ref file of the branch a worktree's HEAD names (`ref: refs/…`),
 * under the repository's git dir `common`; null for a detached HEAD or one
 * that cannot be read (git says what is wrong with it). Read without
 * blocking: HEAD swapped for a FIFO after its lstat is not waited on.
 */
function headRef(head: string, common: string): string | null {
  let fd: number;
  try {
    fd = openSync(head, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const n = readSync(fd, buf, 0, buf.length, 0);
    const m = /^ref: (refs\/[^\s]+)\s*$/.exec(buf.toString('utf8', 0, n));
    if (!m || m[1]!.split('/').includes('..')) return null;
    return join(common, m[1]!);
  } finally {
    closeSync(fd);
  }
}

/** At most `n` characters of agent-written text, for a message. */
const excerpt = (s: string, n = 200) => JSON.stringify(s.length > n ? `${s.slice(0, n)}…` : s);

const realOrNull = (p: string): string | null => {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
};

/** `p` is `dir` or below it (a name like `..x` inside it included). */
const inside = (dir: string, p: string) => {
  const rel = relative(dir, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

/** Where git is pointed for a command in a workspace whose link was found good. */
export interface PinnedGitDir {
  /** The worktree git dir the link names, as a real path. */
  gitDir: string;
  /** The workspace's top, as a real path. */
  workTree: string;
}

/**
 * The worktree git dir the link text `text` in `top/.git` leads to, or why it
 * does not lead to top's own. git's own reading: `gitdir: <path>`, trailing
 * white space dropped, a relative path taken from `top`.
 */
function followLink(top: string, text: string): PinnedGitDir | { problem: string } {
  const m = /^gitdir: (.+)$/.exec(text.replace(/\s+$/, ''));
  if (!m || m[1]!.includes('\n')) return { problem: `it now holds ${excerpt(text)}, not a gitdir: line` };
  const said = `it now says ${excerpt(`gitdir: ${m[1]}`)}`;
  const realTop = realOrNull(top);
  if (!realTop) return { problem: `${top} cannot be resolved` };
  const gitDir = realOrNull(resolve(realTop, m[1]!));
  if (!gitDir) return { problem: `${said}, which does not exist` };
  if (inside(realTop, gitDir)) return { problem: `${said}, a directory inside the workspace itself` };
  let back: string;
  try {
    back = readFileSync(join(gitDir, 'gitdir'), 'utf8').replace(/\s+$/, '');
  } catch {
    return {
      problem: `${said}, which is not a worktree's git dir (it has no gitdir file naming its worktree)`,
    };
  }
  const backReal = realOrNull(dirname(resolve(gitDir, back)));
  if (basename(back) !== '.git' || backReal !== realTop)
    return { problem: `${said}, the git dir of another worktree (${excerpt(back)})` };
  // Where git keeps a worktree's git dir: <repository's git dir>/worktrees/<name>,
  // its commondir naming that repository's git dir. A look-alike elsewhere
  // would lead git to whatever repository its commondir names.
  const common = dirname(dirname(gitDir));
  let commonDir: string | null = null;
  try {
    commonDir = realOrNull(
      resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').replace(/\s+$/, '')),
    );
  } catch {}
  if (basename(dirname(gitDir)) !== 'worktrees' || commonDir !== common)
    return {
      problem: `${said}, which is not where git keeps a worktree's git dir (<repository>/worktrees/<name>)`,
    };
  return { gitDir, workTree: realTop };
}

/**
 * Checks the links of the workspaces of one Vcs: `check(dir)` throws
 * WorkspaceRedirected unless the `.git` git would use for `dir` leads to its
 * workspace's own worktree git dir, and returns that git dir and work tree
 * for the command to name explicitly (--git-dir, --work-tree), so a link
 * changed between this check and git starting is never followed; null for
 * a checkout with its own .git directory.
 */
export class WorktreeLinks {
  /** Link text found good, per workspace top (as given), and where it leads. */
  private readonly good = new Map<string, { text: string; pin: PinnedGitDir }>();
  /** The loose ref file of the branch HEAD named, per worktree git dir, keyed by HEAD's (inode, mtime, size). */
  private readonly heads = new Map<string, { key: string; ref: string | null }>();

  check(top: string): PinnedGitDir | null {
    const dotGit = readDotGit(top);
    if (dotGit.kind === 'file') return this.checkLink(top, dotGit.text);
    // A checkout with its own .git directory is its own repository (the
    // user's, when a diff is read from it): nothing to follow. Not so a
    // workspace whose link was seen here: its link was replaced.
    if (dotGit.kind === 'dir' && !this.good.has(top)) return null;
    if (dotGit.kind === 'missing' && !this.good.has(top)) {
      // A folder inside a workspace: git takes the nearest .git above, which
      // must then be a good link (not some repository the folders sit in).
      for (let dir = dirname(top); dir !== dirname(dir); dir = dirname(dir)) {
        const above = readDotGit(dir);
        if (above.kind === 'missing') continue;
        if (above.kind === 'file') return this.checkLink(dir, above.text);
        break;
      }
    }
    throw new WorkspaceRedirected(
      top,
      dotGit.kind === 'dir'
        ? 'it was a link to the worktree git dir and is now a directory (a repository of its own)'
        : dotGit.kind === 'missing'
          ? 'it is gone, so git would use whatever repository holds the folders above'
          : 'it is now a symbolic link or not a regular file',
    );
  }

  private checkLink(top: string, text: string): PinnedGitDir {
    const known = this.good.get(top);
    if (known?.text === text) {
      this.checkHead(top, known.pin.gitDir);
      return known.pin;
    }
    // Made or checked here before: git never rewrites a worktree's link while
    // it is in use, so any other text is someone else's.
    if (known)
      throw new WorkspaceRedirected(
        top,
        `it now says ${excerpt(text.replace(/\s+$/, ''))}, not ${excerpt(known.text.replace(/\s+$/, ''))} as when it was made or first checked`,
      );
    const pin = followLink(top, text);
    if ('problem' in pin) throw new WorkspaceRedirected(top, pin.problem);
    this.good.set(top, { text, pin });
    this.checkHead(top, pin.gitDir);
    return pin;
  }

  /**
   * The worktree's HEAD, and its branch's loose ref if it has one, must be
   * regular files: a FIFO there blocks every git reading it (rev-parse, add,
   * write-tree…) and so the runner's stop and release. One lstat of HEAD per
   * command, and one of the ref; HEAD is read again only when it changed.
   */
  private checkHead(top: string, gitDir: string): void {
    const head = join(gitDir, 'HEAD');
    const st = lstatSync(head, { throwIfNoEntry: false });
    if (!st) return; // git says what is wrong with a worktree without HEAD, and does not hang
    if (!st.isFile()) throw new WorkspaceGitFileReplaced(top, head, kindOf(st));
    const key = `${st.ino}:${st.mtimeMs}:${st.size}`;
    let known = this.heads.get(gitDir);
    if (known?.key !== key) {
      known = { key, ref: headRef(head, dirname(dirname(gitDir))) };
      this.heads.set(gitDir, known);
    }
    if (!known.ref) return;
    const rst = lstatSync(known.ref, { throwIfNoEntry: false });
    if (rst && !rst.isFile()) throw new WorkspaceGitFileReplaced(top, known.ref, kindOf(rst));
  }

  /** Forgets a workspace (removed, or about to be made again). */
  forget(top: string): void {
    const known = this.good.get(top);
    if (known) this.heads.delete(known.pin.gitDir);
    this.good.delete(top);
  }
}
