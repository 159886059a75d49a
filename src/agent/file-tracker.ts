// The live picture of which files an agent changed in one iteration, from its
// tool_call / tool_call_update notifications. Real agents spread a call over
// several messages (kind and path on the first, the outcome on the last: see
// the opencode 1.18 sequences in test/unit/file-tracker.test.ts), so state is kept per toolCallId and a call counts once it
// completes. Files changed through a shell produce no events at all: the
// version-control diff at iteration end is the ground truth (mergeWithVcs).
import type { FileChange } from '../model/index.js';
import type { WorkspaceRoot } from './workspace-path.js';

import { isObj, type Obj } from '../model/obj.js';

/** Kinds that never change a file (execute does, but tells us nothing about which). */
const IGNORED_KINDS = new Set(['read', 'search', 'think', 'fetch', 'switch_mode', 'execute']);
const MODIFYING_KINDS = new Set(['edit', 'delete', 'move']);

interface Diff {
  path: string;
  oldText: string | null;
  newText: string;
}

interface CallState {
  kind?: string;
  title?: string;
  locations: string[];
  diffs: Diff[];
  rawInput?: Obj;
  rawOutput?: Obj;
}

/**
 * Calls kept open at once, and ended calls remembered (so a late update of
 * one is ignored, not counted twice). An agent has a handful open; one that
 * floods tool calls (100,000 in a turn held ~40 MB here) loses its oldest,
 * which costs at most a miscount the version-control diff corrects.
 */
export const MAX_OPEN_CALLS = 4096;
export const MAX_ENDED_CALLS = 4096;

function lineCount(text: string): number {
  if (!text) return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n - 1 : n;
}

/** Lines added and removed between two texts: what differs after the common head and tail. */
export function countDiff(oldText: string | null, newText: string): { additions: number; deletions: number } {
  if (!oldText) return { additions: lineCount(newText), deletions: 0 };
  const a = oldText.split('\n');
  const b = newText.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  return { additions: b.length - head - tail, deletions: a.length - head - tail };
}

const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined;

export class FileTracker {
  private calls = new Map<string, CallState>();
  /** Ids of calls that ended, oldest first (a Set keeps insertion order). */
  private ended = new Set<string>();
  private changes = new Map<string, FileChange>();

  constructor(
    private readonly workspace: WorkspaceRoot,
    private readonly onChange?: (f: FileChange) => void,
  ) {}

  /** Feeds one session/update payload (`params.update`); anything but tool calls is ignored. */
  ingest(update: unknown): void {
    if (!isObj(update)) return;
    const kind = update.sessionUpdate;
    if (kind !== 'tool_call' && kind !== 'tool_call_update') return;
    const id = update.toolCallId;
    if (typeof id !== 'string') return;
    if (this.ended.has(id)) return;
    let st = this.calls.get(id);
    if (!st) {
      st = { locations: [], diffs: [] };
      this.calls.set(id, st);
      if (this.calls.size > MAX_OPEN_CALLS) this.calls.delete(this.calls.keys().next().value!);
    }
    if (typeof update.kind === 'string') st.kind = update.kind;
    if (typeof update.title === 'string' && update.title) st.title = update.title;
    if (Array.isArray(update.locations)) {
      const locs = update.locations.flatMap((l) =>
        isObj(l) && typeof l.path === 'string' && l.path ? [l.path] : [],
      );
      if (locs.length) st.locations = locs;
    }
    if (Array.isArray(update.content)) {
      const diffs: Diff[] = [];
      for (const c of update.content)
        if (isObj(c) && c.type === 'diff' && typeof c.newText === 'string')
          diffs.push({
            path: typeof c.path === 'string' ? c.path : '',
            oldText: typeof c.oldText === 'string' ? c.oldText : null,
            newText: c.newText,
          });
      if (diffs.length) st.diffs = diffs;
    }
    if (isObj(update.rawInput) && Object.keys(update.rawInput).length) st.rawInput = update.rawInput;
    if (isObj(update.rawOutput)) st.rawOutput = update.rawOutput;
    const status = update.status;
    if (status === 'failed' || status === 'cancelled' || status === 'completed') {
      if (status === 'completed') this.complete(st);
      this.end(id);
    }
  }

  /** Forgets a call's state, remembering only that it ended. */
  private end(id: string): void {
    this.calls.delete(id);
    this.ended.add(id);
    if (this.ended.size > MAX_ENDED_CALLS) this.ended.delete(this.ended.values().next().value!);
  }

  /** Files changed since the last reset, in the order first seen. */
  files(): FileChange[] {
    return [...this.changes.values()].map((f) => ({ ...f }));
  }

  /** Calls held (open, or remembered as ended): bounded however many the agent sends. */
  held(): number {
    return this.calls.size + this.ended.size;
  }

  private complete(st: CallState): void {
    const kind = st.kind;
    if (kind && IGNORED_KINDS.has(kind)) return;
    const meta = isObj(st.rawOutput?.metadata) ? (st.rawOutput.metadata as Obj) : undefined;
    const filediff = isObj(meta?.filediff) ? (meta.filediff as Obj) : undefined;
    // Unknown or "other" kinds count only with evidence of a change.
    if (!(kind && MODIFYING_KINDS.has(kind)) && st.diffs.length === 0 && !filediff) return;

    const fromDiffs = st.diffs.filter((d) => d.path);
    let paths: string[];
    if (fromDiffs.length) paths = [...new Set(fromDiffs.map((d) => d.path))];
    else if (st.locations.length) paths = [...new Set(st.locations)];
    else {
      const one = [
        filediff?.file,
        meta?.filepath,
        st.rawInput?.filePath,
        st.rawInput?.file_path,
        st.rawInput?.path,
      ].find((v): v is string => typeof v === 'string' && v.length > 0);
      paths = one ? [one] : [];
    }
    const single = paths.length === 1;
    for (const p of paths) {
      const rel = this.workspace.relativeLexical(p);
      if (rel === null) continue;
      const diffs = single ? st.diffs : st.diffs.filter((d) => d.path === p);
      const isNew = diffs.some((d) => !d.oldText) || (single && meta?.exists === false);
      let additions = single ? num(filediff?.additions) : undefined;
      let deletions = single ? num(filediff?.deletions) : undefined;
      if (additions === undefined || deletions === undefined) {
        let a = 0;
        let d = 0;
        for (const x of diffs) {
          const c = countDiff(x.oldText, x.newText);
          a += c.additions;
          d += c.deletions;
        }
        // A new file written with no diff block: its content is the addition.
        if (!diffs.length && isNew && typeof st.rawInput?.content === 'string')
          a = lineCount(st.rawInput.content);
        additions ??= a;
        deletions ??= d;
      }
      this.record({
        path: rel,
        // The spec's AbsPath: the workspace as the job knows it, not as the agent spelled it.
        abs_path: `${this.workspace.path}/${rel}`,
        is_new: isNew && kind !== 'delete',
        is_deleted: kind === 'delete',
        additions,
        deletions,
      });
    }
  }

  private record(f: FileChange): void {
    const prev = this.changes.get(f.path);
    let next: FileChange;
    if (!prev) next = f;
    else if (prev.is_new && f.is_deleted) {
      // Created and removed in the same iteration: no change left.
      this.changes.delete(f.path);
      this.onChange?.({ ...f });
      return;
    } else
      next = {
        path: f.path,
        abs_path: f.abs_path,
        is_new: prev.is_new && !f.is_deleted,
        is_deleted: f.is_deleted,
        additions: prev.additions + f.additions,
        deletions: prev.deletions + f.deletions,
      };
    this.changes.set(f.path, next);
    this.onChange?.({ ...next });
  }
}
