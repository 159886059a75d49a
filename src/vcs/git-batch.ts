// The long-lived git processes of one workspace (git-pipe.ts): object and
// ref reads (cat-file --batch-command), ref transactions (update-ref
// --stdin), file lists between commits (diff-tree --stdin), commit
// objects written (hash-object --stdin-paths), and trees written (mktree
// --batch, started on the first tree). What each
// request and reply looks like is here; what they mean is GitVcs's.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeBytes } from '../text/bytes.js';
import type { GitOptions } from './git-run.js';
import { GitPipe, type ReplyEnd } from './git-pipe.js';
import type { IndexTree } from './index-tree.js';

export interface ObjectInfo {
  sha: string;
  type: string;
}

export interface ObjectContents extends ObjectInfo {
  body: Buffer;
}

const NL = 0x0a;

/**
 * Where the replies to `kinds` (cat-file --batch-command's, in order) end in
 * `out`, and each reply: a header line `<sha> <type> <size>`, followed for
 * `contents` by that many bytes and a newline, or `<name> missing`.
 */
function catFileReplies(
  out: Buffer,
  kinds: readonly ('info' | 'contents')[],
): { end: number; replies: (ObjectContents | null)[] } | null {
  const replies: (ObjectContents | null)[] = [];
  let at = 0;
  for (const kind of kinds) {
    const nl = out.indexOf(NL, at);
    if (nl < 0) return null;
    const fields = out.toString('latin1', at, nl).split(' ');
    const [sha, type, size] = fields;
    at = nl + 1;
    // Found: exactly "<hex id> <type> <size>". "<name> missing" names what was
    // asked, which may hold spaces: "a commit 12 b^{commit} missing" is none.
    if (fields.length !== 3 || !/^[0-9a-f]{40,64}$/.test(sha!) || !/^\d+$/.test(size!)) {
      replies.push(null); // missing, ambiguous
      continue;
    }
    if (kind === 'info') {
      replies.push({ sha: sha!, type: type!, body: Buffer.alloc(0) });
      continue;
    }
    const n = Number(size);
    if (out.length < at + n + 1) return null;
    replies.push({ sha: sha!, type: type!, body: out.subarray(at, at + n) });
    at += n + 1;
  }
  return { end: at, replies };
}

/** A name git may be asked about on one line: no line break, nothing it would take for an option. */
function checkName(name: string): string {
  if (/[\n\r\0]/.test(name) || name.startsWith('-'))
    throw new Error(`not a revision to ask git about: ${JSON.stringify(name)}`);
  return name;
}

export class WorkspaceBatch {
  private readonly objects: GitPipe;
  private readonly refs: GitPipe;
  private readonly diffs: GitPipe;
  private readonly writer: GitPipe;
  private readonly trees: GitPipe;
  /** A folder of this process's own (0700) for the commit objects handed to hash-object by path. */
  private tmp: string | null = null;
  /** The line diff-tree echoes back after each request: where its reply ends (not a hex id, so not a request). */
  private readonly mark = `x${randomBytes(12).toString('hex')}\n`;

  constructor(ws: string, before: GitOptions['before'], diffArgs: readonly string[]) {
    this.objects = new GitPipe(ws, ['cat-file', '--batch-command', '--buffer'], before);
    // One reflog message for every transaction: update-ref takes it once, when it starts.
    this.refs = new GitPipe(ws, ['update-ref', '-m', 'incrementum', '--stdin'], before);
    this.diffs = new GitPipe(ws, ['diff-tree', '--stdin', ...diffArgs], before);
    this.writer = new GitPipe(
      ws,
      ['hash-object', '-w', '-t', 'commit', '--no-filters', '--stdin-paths'],
      before,
    );
    this.trees = new GitPipe(ws, ['mktree', '-z', '--batch'], before);
  }

  /**
   * Writes `trees` (subtrees first: mktree checks that what an entry names
   * exists) and checks that git stored each under the id computed for it.
   */
  async writeTrees(trees: readonly IndexTree[]): Promise<void> {
    if (trees.length === 0) return;
    // Each tree's entries, then an empty entry: the end of that tree.
    const input = Buffer.concat(trees.flatMap((t) => [t.mktree, Buffer.of(0)]));
    const reply = await this.trees.ask(input, (out) => {
      let at = 0;
      for (let i = 0; i < trees.length; i++) {
        const nl = out.indexOf(NL, at);
        if (nl < 0) return -1;
        at = nl + 1;
      }
      return at;
    });
    const ids = reply.toString('latin1').split('\n');
    trees.forEach((t, i) => {
      if (ids[i] !== t.sha)
        throw new Error(`git mktree stored ${JSON.stringify(ids[i])} for a tree whose id is ${t.sha}`);
    });
  }

  /**
   * Writes `text` as a commit object and returns its id, checked against the
   * id of exactly these bytes: what git stored is what this process wrote.
   */
  async writeCommit(text: string): Promise<string> {
    const bytes = Buffer.from(text, 'utf8');
    this.tmp ??= mkdtempSync(join(tmpdir(), 'ii-commit-'));
    const file = join(this.tmp, randomBytes(8).toString('hex'));
    // hash-object reads a path per line and unquotes one starting with '"'.
    if (/[\n\r"]/.test(file))
      throw new Error(`a temporary file name git cannot be given: ${JSON.stringify(file)}`);
    writeFileSync(file, bytes, { mode: 0o600, flag: 'wx' });
    try {
      const reply = await this.writer.ask(`${file}\n`, (out) => {
        const nl = out.indexOf(NL);
        return nl < 0 ? -1 : nl + 1;
      });
      const sha = reply.toString('latin1').trim();
      const id = createHash(sha.length === 64 ? 'sha256' : 'sha1')
        .update(`commit ${bytes.length}\0`)
        .update(bytes)
        .digest('hex');
      if (sha !== id)
        throw new Error(`git hash-object stored ${JSON.stringify(sha)} for a commit whose id is ${id}`);
      return sha;
    } finally {
      rmSync(file, { force: true });
    }
  }

  /** Each name's object (its id and type), or null when it names none. */
  async info(names: readonly string[]): Promise<(ObjectInfo | null)[]> {
    return this.cat(names.map((n) => ['info', n] as const));
  }

  /** The object `name` names, with its contents, or null. */
  async contents(name: string): Promise<ObjectContents | null> {
    return (await this.cat([['contents', name]]))[0]!;
  }

  private async cat(
    asks: readonly (readonly ['info' | 'contents', string])[],
  ): Promise<(ObjectContents | null)[]> {
    const kinds = asks.map(([k]) => k);
    const input = asks.map(([k, n]) => `${k} ${checkName(n)}\n`).join('') + 'flush\n';
    const end: ReplyEnd = (out) => catFileReplies(out, kinds)?.end ?? -1;
    return catFileReplies(await this.objects.ask(input, end), kinds)!.replies;
  }

  /**
   * Runs `lines` (update-ref --stdin commands: `update <ref> <new> [<old>]`,
   * `create <ref> <new>`) as one transaction: all of them or none. A refused
   * one rejects with git's GitError (update-ref exits; the next starts again).
   */
  async transaction(lines: readonly string[]): Promise<void> {
    for (const l of lines) checkName(l);
    const done = Buffer.from('commit: ok\n');
    await this.refs.ask(`start\n${lines.map((l) => `${l}\n`).join('')}prepare\ncommit\n`, (out) => {
      const at = out.indexOf(done);
      return at < 0 ? -1 : at + done.length;
    });
  }

  /** diff-tree --stdin's output for `lines` (`<to> <from>` each), as a string. */
  async diffTree(lines: readonly string[]): Promise<string> {
    for (const l of lines) checkName(l);
    const mark = Buffer.from(this.mark);
    const reply = await this.diffs.ask(`${lines.map((l) => `${l}\n`).join('')}${this.mark}`, (out) =>
      out.length >= mark.length && out.subarray(out.length - mark.length).equals(mark) ? out.length : -1,
    );
    return decodeBytes(reply.subarray(0, reply.length - mark.length));
  }

  /**
   * Starts the reader and the ref writer now, each with a request that
   * changes nothing (HEAD read, an empty transaction), so a job's first
   * change does not wait for two git starts in a row.
   */
  async warm(): Promise<void> {
    await Promise.all([this.info(['HEAD']), this.transaction([])]);
  }

  close(): void {
    this.objects.close();
    this.refs.close();
    this.diffs.close();
    this.writer.close();
    this.trees.close();
    if (this.tmp) rmSync(this.tmp, { recursive: true, force: true });
    this.tmp = null;
  }
}
