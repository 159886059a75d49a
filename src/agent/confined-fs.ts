// Reading and writing a file for the agent (fs/read_text_file and
// fs/write_text_file) at a path already judged inside the workspace
// (WorkspaceRoot.resolveInside), without trusting that judgement to still
// hold: the agent runs alongside and can swap a directory or the file itself
// for a symlink between the check and the write. So no link is followed
// again. Each directory from the workspace root down is opened with
// O_NOFOLLOW and the next name looked up in that open directory (through
// /proc/self/fd, which is openat(2) for Node: the lookup starts from the open
// directory, whatever its path has become). The file is written to a fresh
// temp file (O_EXCL never follows a link) and renamed over the name, which
// replaces a link or a hard link there instead of writing through it.
// Neither ever touches the workspace's `.git` or anything in a git directory
// (git-paths.ts).
import { randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { gitPathRefusal } from './git-paths.js';
import type { WorkspaceRoot } from './workspace-path.js';

/** A link appeared where the check saw none: the path now leads somewhere else. */
export class PathChanged extends Error {
  constructor(readonly path: string) {
    super(`${path} became a symbolic link after it was checked`);
    this.name = 'PathChanged';
  }
}

/** The path is the workspace's `.git` or inside a git directory: never the agent's to read or write. */
export class GitPathRefused extends Error {
  constructor(
    readonly path: string,
    why: string,
  ) {
    super(why);
    this.name = 'GitPathRefused';
  }
}

function refuseGitPath(ws: WorkspaceRoot, real: string): void {
  const why = gitPathRefusal(ws, real);
  if (why !== null) throw new GitPathRefused(real, why);
}

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants;
// Without /proc (not Linux) each name is looked up by its full path: every
// component is still checked, but a swap between two steps is not excluded.
const BY_FD = existsSync('/proc/self/fd');

interface Dir {
  handle: FileHandle;
  real: string;
}

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code;
const at = (d: Dir, name: string) => (BY_FD ? `/proc/self/fd/${d.handle.fd}/${name}` : `${d.real}/${name}`);

function errnoError(code: string, what: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${what}, '${path}'`), { code, path });
}

/**
 * The error to report for a failed open of `via` (which names `real`): a
 * link found there is the path having changed; otherwise the system's own
 * error, naming the real path instead of the /proc one.
 */
async function explain(err: unknown, via: string, real: string): Promise<unknown> {
  const code = codeOf(err);
  if ((code === 'ELOOP' || code === 'ENOTDIR') && (await lstat(via).catch(() => null))?.isSymbolicLink())
    return new PathChanged(real);
  if (err instanceof Error && via !== real) {
    err.message = err.message.split(via).join(real);
    (err as NodeJS.ErrnoException).path = real;
  }
  return err;
}

async function openDir(via: string, real: string): Promise<FileHandle> {
  try {
    return await open(via, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    throw await explain(err, via, real);
  }
}

/** Opens `root` and each directory of `names` below it in turn, creating missing ones when asked. */
async function walk(root: string, names: string[], create: boolean): Promise<Dir> {
  let dir: Dir = { handle: await openDir(root, root), real: root };
  try {
    for (const name of names) {
      const via = at(dir, name);
      const real = `${dir.real}/${name}`;
      let next: FileHandle;
      try {
        next = await openDir(via, real);
      } catch (err) {
        if (!create || codeOf(err) !== 'ENOENT') throw err;
        await mkdir(via).catch((e: unknown) => {
          if (codeOf(e) !== 'EEXIST') throw e;
        });
        next = await openDir(via, real);
      }
      const up = dir.handle;
      dir = { handle: next, real };
      await up.close();
    }
    return dir;
  } catch (err) {
    await dir.handle.close();
    throw err;
  }
}

/** The directories leading to `real` and its name, below the workspace. */
function split(ws: WorkspaceRoot, real: string): { dirs: string[]; name: string } {
  const dirs = relative(ws.real, real).split(sep).filter(Boolean);
  const name = dirs.pop();
  if (!name) throw errnoError('EISDIR', 'illegal operation on a directory', real);
  return { dirs, name };
}

/** The text of `real` (a path resolveInside returned), following no link. */
export async function readConfined(ws: WorkspaceRoot, real: string): Promise<string> {
  refuseGitPath(ws, real);
  const { dirs, name } = split(ws, real);
  const dir = await walk(ws.real, dirs, false);
  try {
    const via = at(dir, name);
    let h: FileHandle;
    try {
      // O_NONBLOCK: a FIFO the agent put there must not hang the read.
      h = await open(via, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (err) {
      throw await explain(err, via, real);
    }
    try {
      const st = await h.stat();
      if (st.isDirectory()) throw errnoError('EISDIR', 'illegal operation on a directory', real);
      if (!st.isFile()) throw errnoError('EINVAL', 'not a regular file', real);
      return await h.readFile('utf8');
    } finally {
      await h.close();
    }
  } finally {
    await dir.handle.close();
  }
}

/**
 * Writes `content` to `real` (a path resolveInside returned), creating
 * missing directories, following no link, keeping an existing file's mode.
 */
export async function writeConfined(ws: WorkspaceRoot, real: string, content: string): Promise<void> {
  refuseGitPath(ws, real);
  const { dirs, name } = split(ws, real);
  const dir = await walk(ws.real, dirs, true);
  try {
    const via = at(dir, name);
    const old = await lstat(via).catch(() => null);
    if (old?.isDirectory()) throw errnoError('EISDIR', 'illegal operation on a directory', real);
    const mode = old?.isFile() ? old.mode & 0o7777 : 0o666;
    // Short and fixed-length, so a name near the length limit still gets one.
    const tmpName = `.ii-write-${randomBytes(6).toString('hex')}.tmp`;
    const tmp = at(dir, tmpName);
    let h: FileHandle;
    try {
      h = await open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    } catch (err) {
      throw await explain(err, tmp, `${dir.real}/${tmpName}`);
    }
    try {
      try {
        await h.writeFile(content, 'utf8');
        if (old?.isFile()) await h.chmod(mode); // the umask narrowed it at creation
      } finally {
        await h.close();
      }
      await rename(tmp, via);
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw await explain(err, via, real);
    }
  } finally {
    await dir.handle.close();
  }
}
