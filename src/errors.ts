import { dirname, isAbsolute } from 'node:path';

/**
 * An error caused by what the user asked for or by their environment (bad
 * id, bad config, missing agent). The CLI prints its message alone, no stack.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/**
 * A claim of a todo for a job that the store refused (it is held, or not
 * ready): model/backlog.ts claimRefusal says why.
 */
export class ClaimRefused extends UserError {
  constructor(message: string) {
    super(message);
    this.name = 'ClaimRefused';
  }
}

/**
 * SQLite found the state database damaged (a bad page, a header it cannot
 * read). The command stops with exit 3 and the message says what to do; the
 * store has already stopped writing (src/state/sqlite/damage.ts).
 */
export class StoreDamagedError extends UserError {
  constructor(message: string) {
    super(message, 3);
    this.name = 'StoreDamagedError';
  }
}

/**
 * A write that found no space left on its filesystem (ENOSPC, a quota, SQLite's
 * SQLITE_FULL): the command stops with exit 3, no stack, naming the path and
 * what to do. A job that meets it ends failed with jobReason when that can
 * still be recorded.
 */
export class DiskFullError extends UserError {
  constructor(
    readonly path: string,
    /** What it means for what the command was doing, a line after the first. */
    consequence?: string,
  ) {
    super([`disk full: ${path}`, ...(consequence ? [consequence] : []), freeSpaceAdvice(path)].join('\n'), 3);
    this.name = 'DiskFullError';
  }

  /** The reason a job that met it is recorded failed with. */
  get jobReason(): string {
    return `disk full: ${this.path}\n${freeSpaceAdvice(this.path, 'retry the job')}`;
  }
}

/** What to do, naming the folder whose filesystem is full (df takes a folder that exists). */
function freeSpaceAdvice(path: string, then = 'run the command again'): string {
  if (!isAbsolute(path)) return `Free space on the disk, then ${then}.`;
  const dir = dirname(path);
  return `Free space on the filesystem holding ${dir} (df -h ${dir} shows what is left), then ${then}.`;
}

/** The words of Node, git, SQLite, and this DiskFullError's own message (wrapped by another error). */
const NO_SPACE =
  /no space left on device|disk quota exceeded|database or disk is full|\bENOSPC\b|\bEDQUOT\b|(?:^|: )disk full: \//im;

/**
 * The DiskFullError an error stands for, or null: a DiskFullError itself, a
 * Node error with code ENOSPC or EDQUOT, or a message (git's, an agent's, one
 * wrapped by another error) that says so. The path is the one the error names
 * (Node's `path`, a quoted path before the words), else `fallback`.
 */
export function asDiskFull(err: unknown, fallback?: string): DiskFullError | null {
  if (err instanceof DiskFullError) return err;
  if (!(err instanceof Error)) return null;
  const e = err as NodeJS.ErrnoException;
  const coded = e.code === 'ENOSPC' || e.code === 'EDQUOT';
  if (!coded && !NO_SPACE.test(e.message)) return null;
  const path =
    (coded && typeof e.path === 'string' ? e.path : null) ??
    quotedPath(e.message) ??
    /(?:^|: )disk full: (\/.*)$/m.exec(e.message)?.[1] ??
    fallback;
  return new DiskFullError(path ?? '(a file whose name the error did not give)');
}

/** The last quoted absolute path in a message: Node's "open '/x/y'", git's "could not create '/x/y'". */
function quotedPath(message: string): string | null {
  const all = [...message.matchAll(/'(\/[^'\n]+)'/g)];
  return all.at(-1)?.[1] ?? null;
}
