// The trees `git write-tree` would write for an index, computed here from the
// index file: an iteration stages with `git add` and then needs its tree, and
// a write-tree of its own was a second git process per iteration (a process
// start is most of what it costs). Only the plain case is taken: an index
// with anything write-tree has rules of its own for (conflicts, intent-to-add
// or skip-worktree entries, a split or sparse index, index version 4, an odd
// mode, many entries, where git's own cache of trees is cheaper) gives null,
// and the caller runs write-tree as before. The trees are written by git
// (mktree, git-batch.ts), which returns their ids: checked against these.
import { createHash } from 'node:crypto';

/** One tree object: its id, and its entries as `git mktree -z` reads them. */
export interface IndexTree {
  sha: string;
  mktree: Buffer;
}

export interface IndexTrees {
  /** The root tree's id: what write-tree prints. */
  root: string;
  /** Every tree, subtrees before the trees that hold them (the order mktree can write them in). */
  trees: IndexTree[];
}

/** Above this many entries write-tree, which reuses the index's cache of trees, is the cheaper. */
export const MAX_INDEX_ENTRIES = 5000;

const MODES = new Map<number, { mode: string; type: string }>([
  [0o100644, { mode: '100644', type: 'blob' }],
  [0o100755, { mode: '100755', type: 'blob' }],
  [0o120000, { mode: '120000', type: 'blob' }],
  [0o160000, { mode: '160000', type: 'commit' }],
]);
const SLASH = 0x2f;

interface Entry {
  path: Buffer;
  mode: number;
  sha: Buffer;
}

/** The index's entries, or null where this is not the plain case (see the file's head). */
function readEntries(index: Buffer, hashLen: number): Entry[] | null {
  if (index.length < 12 + hashLen || index.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = index.readUInt32BE(4);
  if (version !== 2 && version !== 3) return null;
  const count = index.readUInt32BE(8);
  if (count === 0 || count > MAX_INDEX_ENTRIES) return null;
  const end = index.length - hashLen; // the trailing checksum
  const flagsAt = 40 + hashLen;
  const entries: Entry[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at + flagsAt + 2 > end) return null;
    const mode = index.readUInt32BE(at + 24);
    const flags = index.readUInt16BE(at + flagsAt);
    // 0x4000: extended flags (intent-to-add, skip-worktree); 0x3000: a conflict's stage.
    if (flags & 0x7000 || !MODES.has(mode)) return null;
    const nameAt = at + flagsAt + 2;
    const nul = index.indexOf(0, nameAt);
    if (nul < 0 || nul >= end) return null;
    const path = index.subarray(nameAt, nul);
    if (path.length === 0 || path[0] === SLASH || path[path.length - 1] === SLASH) return null;
    entries.push({ path, mode, sha: index.subarray(at + 40, at + 40 + hashLen) });
    // Each entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
    at += (nul - at + 8) & ~7;
  }
  // Extensions: a split index keeps its entries elsewhere, a sparse one folds folders.
  while (at + 8 <= end) {
    const sig = index.toString('latin1', at, at + 4);
    if (sig === 'link' || sig === 'sdir') return null;
    at += 8 + index.readUInt32BE(at + 4);
  }
  return at === end ? entries : null;
}

/** The trees of `index` (the file's bytes), for ids of `hashLen` bytes (20: SHA-1, 32: SHA-256); null: run write-tree. */
export function treesOfIndex(index: Buffer, hashLen: 20 | 32): IndexTrees | null {
  const entries = readEntries(index, hashLen);
  if (!entries) return null;
  const algo = hashLen === 32 ? 'sha256' : 'sha1';
  const trees: IndexTree[] = [];
  // The index is sorted by path bytes, which is the order a tree lists its
  // entries in (a folder sorts as its name with a '/'): each folder's
  // entries are a run of consecutive entries, in its tree's order.
  const build = (lo: number, hi: number, off: number): Buffer => {
    const body: Buffer[] = [];
    const lines: Buffer[] = [];
    let i = lo;
    while (i < hi) {
      const p = entries[i]!.path;
      const slash = p.indexOf(SLASH, off);
      if (slash < 0) {
        const e = entries[i]!;
        const name = p.subarray(off);
        const m = MODES.get(e.mode)!;
        body.push(Buffer.from(`${m.mode} `), name, Buffer.of(0), e.sha);
        lines.push(Buffer.from(`${m.mode} ${m.type} ${e.sha.toString('hex')}\t`), name, Buffer.of(0));
        i++;
        continue;
      }
      const name = p.subarray(off, slash);
      const prefix = p.subarray(0, slash + 1);
      let j = i + 1;
      while (
        j < hi &&
        entries[j]!.path.length > slash &&
        entries[j]!.path.subarray(0, slash + 1).equals(prefix)
      )
        j++;
      const sub = build(i, j, slash + 1);
      body.push(Buffer.from('40000 '), name, Buffer.of(0), sub);
      lines.push(Buffer.from(`040000 tree ${sub.toString('hex')}\t`), name, Buffer.of(0));
      i = j;
    }
    const content = Buffer.concat(body);
    const id = createHash(algo).update(`tree ${content.length}\0`).update(content).digest();
    trees.push({ sha: id.toString('hex'), mktree: Buffer.concat(lines) });
    return id;
  };
  // A path with an empty folder name ("a//b") is not a plain index.
  if (entries.some((e) => e.path.includes('//'))) return null;
  const root = build(0, entries.length, 0).toString('hex');
  return { root, trees };
}
