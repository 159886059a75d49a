// A diff of two commits for a person to read (ii job diff, the dashboard's
// iteration view): streamed from git and cut to limits (lines per file, lines
// in all, bytes per line), each cut said on a line of its own with the git
// command that shows all of it. Binary files are summarised by size. Files too
// big for git to diff quickly (a 150 MB one takes git ~10 s and 230 MB) are
// never given to it: an added or removed one is read from its blob a chunk at
// a time, its first lines shown and the rest counted. Memory stays flat
// whatever the size of the change.
import { decodeBytes } from '../text/bytes.js';
import { gitStream, git, type GitOptions } from './git-run.js';
import { revArg } from './rev-arg.js';
import { grouped } from '../text/grouped.js';

export interface DiffLimits {
  /** Lines shown of one file (its header included). */
  fileLines: number;
  /** Lines shown in all. */
  totalLines: number;
  /** Bytes kept of one line. */
  lineBytes: number;
  /** A file (either side) larger than this is not diffed by git. */
  bigFileBytes: number;
}

export const DISPLAY_LIMITS: DiffLimits = {
  fileLines: 2_000,
  totalLines: 10_000,
  lineBytes: 2_000,
  bigFileBytes: 8 * 1024 * 1024,
};

export interface CappedDiff {
  /** A unified diff, with a line starting "… " wherever something was left out. */
  text: string;
  /** True when nothing was left out. */
  complete: boolean;
}

interface Entry {
  path: string;
  /** git's status letter: A, M, D, T… */
  status: string;
  oldBlob: string;
  newBlob: string;
  oldSize: number;
  newSize: number;
}

const NULL_SHA = /^0+$/;
/** git's own test for binary content: a NUL in the first 8000 bytes. */
const BINARY_PROBE = 8000;

const moreLines = (n: number): string => `${grouped(n)} more line${n === 1 ? '' : 's'}`;

/** A size as people say it: 150 MB, 12 KB (powers of 1000, like the brief's "150 MB"). */
export function humanSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${u === 0 || v >= 10 ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

/** A path as the user can paste it into a shell. */
const sh = (p: string): string => (/^[\w./@%+=:,-]+$/.test(p) ? p : `'${p.replaceAll("'", `'\\''`)}'`);

function sizes(e: Entry): string {
  if (e.status === 'A') return `${humanSize(e.newSize)} (added)`;
  if (e.status === 'D') return `${humanSize(e.oldSize)} (removed)`;
  return `${humanSize(e.oldSize)} → ${humanSize(e.newSize)}`;
}

/** Splits a byte stream into lines of at most `max` bytes (the rest of a longer line is dropped, and said). */
class LineSplitter {
  private parts: Buffer[] = [];
  private len = 0;
  private cut = false;
  private pending = false;

  constructor(
    private readonly max: number,
    private readonly onLine: (line: string, cut: boolean) => boolean,
  ) {}

  /** Feeds a chunk; returns the offset after the line onLine stopped at, or -1 when all of it was used. */
  push(chunk: Buffer): number {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) {
        this.add(chunk, start, chunk.length);
        return -1;
      }
      this.add(chunk, start, nl);
      start = nl + 1;
      if (!this.emit()) return start;
    }
  }

  /** The last line, when the stream did not end with a newline. */
  end(): void {
    if (this.pending) this.emit();
  }

  private add(b: Buffer, s: number, e: number): void {
    if (e > s) this.pending = true;
    const take = Math.min(Math.max(this.max - this.len, 0), e - s);
    if (take > 0) {
      this.parts.push(Buffer.from(b.subarray(s, s + take)));
      this.len += take;
    }
    if (take < e - s) this.cut = true;
  }

  private emit(): boolean {
    // A file name in a header, or a line of a file, that is not UTF-8 keeps its bytes (bytes.ts).
    const line = decodeBytes(Buffer.concat(this.parts, this.len));
    const cut = this.cut;
    this.parts = [];
    this.len = 0;
    this.cut = false;
    this.pending = false;
    return this.onLine(line, cut);
  }
}

function countNewlines(b: Buffer, from = 0): number {
  let n = 0;
  for (let i = b.indexOf(10, from); i >= 0; i = b.indexOf(10, i + 1)) n++;
  return n;
}

/** The lines being shown, and what was left out. */
class Shown {
  readonly lines: string[] = [];
  complete = true;
  private total = 0;
  /** Files not shown at all, the lines in all being used up. */
  readonly unshown: string[] = [];

  constructor(
    readonly limits: DiffLimits,
    private readonly from: string,
    private readonly to: string,
  ) {}

  get full(): boolean {
    return this.total >= this.limits.totalLines;
  }

  /** Room left for a file that has shown `shownOfFile` lines. */
  room(shownOfFile: number): number {
    return Math.max(0, Math.min(this.limits.fileLines - shownOfFile, this.limits.totalLines - this.total));
  }

  add(line: string, cut = false): void {
    this.lines.push(cut ? `${line} …` : line);
    this.total++;
    if (cut) this.complete = false;
  }

  /** A line saying what was left out (not counted against the limits). */
  leftOut(what: string, path?: string): void {
    this.complete = false;
    const cmd = path ? `git diff ${this.from} ${this.to} -- ${sh(path)}` : `git diff ${this.from} ${this.to}`;
    this.lines.push(`… ${what} (${cmd} for all of it)`);
  }

  finish(): CappedDiff {
    if (this.unshown.length) {
      const n = this.unshown.length;
      const names = this.unshown.slice(0, 5).join(', ') + (n > 5 ? ', …' : '');
      this.leftOut(`${grouped(n)} more file${n === 1 ? '' : 's'} not shown: ${names}`);
    }
    return { text: this.lines.join('\n'), complete: this.complete };
  }
}

/** The files that differ, with their blobs (`--raw`: no content is diffed). */
async function entries(
  cwd: string,
  from: string,
  to: string,
  pathspec: string[],
  o: GitOptions,
): Promise<Entry[]> {
  const out = await git(
    cwd,
    ['diff', '--raw', '-z', '--no-renames', '--no-abbrev', revArg(from), revArg(to), '--', ...pathspec],
    o,
  );
  const parts = out.split('\0');
  const list: Entry[] = [];
  for (let i = 0; i + 1 < parts.length && parts[i]!.startsWith(':'); i += 2) {
    const [, , oldBlob = '', newBlob = '', status = ''] = parts[i]!.slice(1).split(' ');
    list.push({ path: parts[i + 1]!, status: status.charAt(0), oldBlob, newBlob, oldSize: 0, newSize: 0 });
  }
  return list;
}

/** Blob sizes, in one `git cat-file --batch-check` (a submodule's commit is not here: size 0). */
async function addSizes(cwd: string, list: Entry[], o: GitOptions): Promise<void> {
  const ids = [...new Set(list.flatMap((e) => [e.oldBlob, e.newBlob]).filter((s) => s && !NULL_SHA.test(s)))];
  if (ids.length === 0) return;
  const out = await git(cwd, ['cat-file', '--batch-check=%(objectname) %(objectsize)'], {
    ...o,
    input: ids.join('\n') + '\n',
  });
  const size = new Map<string, number>();
  for (const line of out.split('\n')) {
    const [id = '', n = ''] = line.split(' ');
    if (/^\d+$/.test(n)) size.set(id, Number(n));
  }
  for (const e of list) {
    e.oldSize = size.get(e.oldBlob) ?? 0;
    e.newSize = size.get(e.newBlob) ?? 0;
  }
}

/** The files of normal size, through one streamed `git diff`, cut to the limits. */
async function streamSmall(
  cwd: string,
  from: string,
  to: string,
  pathspec: string[],
  files: Entry[],
  shown: Shown,
  o: GitOptions,
): Promise<void> {
  // git prints files in the order --raw listed them: the n-th header is files[n].
  let index = -1;
  let ofFile = 0;
  let skipped = 0;
  let stoppedEarly = false;
  const closeFile = () => {
    const f = files[index];
    if (f && skipped > 0) shown.leftOut(`${moreLines(skipped)} of ${f.path} not shown`, f.path);
    ofFile = 0;
    skipped = 0;
  };
  const splitter = new LineSplitter(shown.limits.lineBytes, (line, cut) => {
    if (line.startsWith('diff --git ')) {
      closeFile();
      index++;
      if (shown.full) {
        stoppedEarly = true;
        return false;
      }
    }
    const f = files[index];
    if (f && line.startsWith('Binary files ')) line = `binary file, ${sizes(f)}`;
    if (shown.room(ofFile) === 0) {
      if (shown.full && ofFile < shown.limits.fileLines) {
        // The lines in all ran out in the middle of this file.
        stoppedEarly = true;
        return false;
      }
      skipped++;
      return true;
    }
    shown.add(line, cut);
    ofFile++;
    return true;
  });
  const r = await gitStream(
    cwd,
    [
      'diff',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      '--no-renames',
      revArg(from),
      revArg(to),
      '--',
      ...pathspec,
    ],
    (chunk) => splitter.push(chunk) < 0,
    o,
  );
  if (!r.stopped && r.code !== 0)
    throw new Error(`git diff failed in ${cwd}: ${r.stderr.trim() || `exit code ${r.code}`}`);
  splitter.end();
  if (stoppedEarly) {
    const current = files[index];
    if (current && ofFile > 0) shown.leftOut(`the rest of ${current.path} not shown`, current.path);
    shown.unshown.push(...files.slice(ofFile > 0 ? index + 1 : Math.max(index, 0)).map((f) => f.path));
  } else closeFile();
}

/** The first bytes of a blob (at most `n`). */
async function blobHead(cwd: string, blob: string, n: number, o: GitOptions): Promise<Buffer> {
  const parts: Buffer[] = [];
  let len = 0;
  await gitStream(
    cwd,
    ['cat-file', 'blob', blob],
    (chunk) => {
      parts.push(chunk);
      len += chunk.length;
      return len < n;
    },
    o,
  );
  return Buffer.concat(parts).subarray(0, n);
}

/** A file too big for git to diff here: summarised, or (added, removed) its first lines from the blob. */
async function bigFile(cwd: string, e: Entry, shown: Shown, o: GitOptions): Promise<void> {
  const removed = e.status === 'D';
  const blob = removed ? e.oldBlob : e.newBlob;
  const head = await blobHead(cwd, blob, BINARY_PROBE, o);
  shown.add(`diff --git a/${e.path} b/${e.path}`);
  if (head.includes(0)) {
    shown.add(`binary file, ${sizes(e)}`);
    return;
  }
  if (e.status !== 'A' && !removed) {
    shown.add(`text file too big to diff here: ${sizes(e)}`);
    shown.leftOut(`the changes to ${e.path} not shown`, e.path);
    return;
  }
  shown.add(removed ? 'deleted file' : 'new file');
  shown.add(removed ? `--- a/${e.path}` : '--- /dev/null');
  shown.add(removed ? '+++ /dev/null' : `+++ b/${e.path}`);
  const hunkAt = shown.lines.length;
  shown.add('@@'); // replaced below, once the lines are counted
  const sign = removed ? '-' : '+';
  let ofFile = 5;
  let lines = 0;
  let counting = false;
  let lastByte = 10;
  const splitter = new LineSplitter(shown.limits.lineBytes, (line, cut) => {
    lines++;
    shown.add(sign + line, cut);
    ofFile++;
    return shown.room(ofFile) > 0;
  });
  await gitStream(
    cwd,
    ['cat-file', 'blob', blob],
    (chunk) => {
      if (chunk.length) lastByte = chunk[chunk.length - 1]!;
      if (counting) {
        lines += countNewlines(chunk);
        return true;
      }
      const at = splitter.push(chunk);
      if (at >= 0) {
        counting = true;
        lines += countNewlines(chunk, at);
      }
      return true;
    },
    o,
  );
  if (!counting) splitter.end();
  else if (lastByte !== 10) lines++; // a last line without a newline
  const shownLines = ofFile - 5;
  shown.lines[hunkAt] = removed ? `@@ -1,${lines} +0,0 @@` : `@@ -0,0 +1,${lines} @@`;
  if (lines > shownLines) shown.leftOut(`${moreLines(lines - shownLines)} of ${e.path} not shown`, e.path);
}

/**
 * The diff from `from` to `to` in `cwd`, limited to `pathspec` (after `--`),
 * cut to `limits`. Throws when git cannot read the commits there. `o` goes
 * to every git command (GitVcs checks the workspace's link before each).
 */
export async function cappedDiff(
  cwd: string,
  from: string,
  to: string,
  pathspec: string[] = ['.'],
  limits: DiffLimits = DISPLAY_LIMITS,
  o: GitOptions = {},
): Promise<CappedDiff> {
  const list = await entries(cwd, from, to, pathspec, o);
  await addSizes(cwd, list, o);
  const isBig = (e: Entry) => Math.max(e.oldSize, e.newSize) > limits.bigFileBytes;
  const small = list.filter((e) => !isBig(e));
  const big = list.filter(isBig);
  const shown = new Shown(limits, from, to);
  if (small.length)
    await streamSmall(
      cwd,
      from,
      to,
      [...pathspec, ...big.map((e) => `:(exclude,literal)${e.path}`)],
      small,
      shown,
      o,
    );
  for (const e of big) {
    if (shown.full) shown.unshown.push(e.path);
    else await bigFile(cwd, e, shown, o);
  }
  return shown.finish();
}
