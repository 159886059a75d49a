// What changed between one iteration and the one before it: `ii job diff`
// and the dashboard's iteration view. Pure: git facts (the file list between
// the two iteration commits) come in as arguments.
import { UserError } from '../errors.js';
import { commitOutcome } from '../model/derive.js';
import {
  type IterationSnapshot,
  type Job,
  type JobChange,
  type JobCommit,
  type JobStage,
  type JobStatus,
  type Usage,
} from '../model/job.js';
import { formatCost, ZERO_USAGE } from '../model/usage.js';
import type { FileStat, Vcs } from '../vcs/vcs.js';

export interface IterationRef {
  /** 1-based. */
  change: number;
  /** 1-based. */
  iteration: number;
  changeRecord: JobChange;
  commit: JobCommit;
  /** The previous iteration of the same change, or null for the first. */
  previous: JobCommit | null;
  /** The commit this iteration is compared with: the previous iteration, the previous change's last commit, or the base. */
  fromCommit: string | null;
  /** The iteration whose commit fromCommit is; null when it is the base. */
  fromEntry: JobCommit | null;
  /** Set when compared with an iteration the user picked (--from), not the one before. */
  from?: { change: number; iteration: number };
}

/** The fewest characters of an iteration id taken as its prefix, as a job id's. */
const MIN_ID_PREFIX = 4;

/** "change.iteration", 1-based: `ii job diff --from 1.1 --to 1.3`. */
export function parseIterationSpec(flag: string, spec: string): { change: number; iteration: number } {
  const m = /^(\d+)\.(\d+)$/.exec(spec.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1)
    throw new UserError(
      `${flag} '${spec}' is not an iteration: give change.iteration, both 1-based (e.g. ${flag} 1.2), or an iteration's id, or ${MIN_ID_PREFIX} or more of its first characters (ii job show lists both).`,
    );
  return { change: Number(m[1]), iteration: Number(m[2]) };
}

/**
 * An iteration named by its stable id (JobCommit.id) or a unique prefix of
 * it, as positions; null when `spec` is change.iteration instead.
 */
function iterationById(job: Job, flag: string, spec: string): { change: number; iteration: number } | null {
  const want = spec.trim().toLowerCase();
  if (/^\d+\.\d+$/.test(want) || !/^[0-9a-z-]+$/.test(want)) return null;
  const hits: { change: number; iteration: number; id: string }[] = [];
  job.changes.forEach((ch, c) =>
    ch.commits.forEach((cm, i) => {
      if (cm.id && (cm.id === want || (want.length >= MIN_ID_PREFIX && cm.id.startsWith(want))))
        hits.push({ change: c + 1, iteration: i + 1, id: cm.id });
    }),
  );
  const exact = hits.find((h) => h.id === want);
  if (exact) return exact;
  if (hits.length === 1) return hits[0]!;
  if (hits.length > 1)
    throw new UserError(
      `${flag} '${spec}' names ${hits.length} iterations of job ${job.id} (${hits.map((h) => `${h.id} = ${h.change}.${h.iteration}`).join(', ')}): give more of the id.`,
    );
  // Too short to be taken for an id: said as any other spec that is no iteration.
  if (want.length < MIN_ID_PREFIX) return null;
  throw new UserError(
    `job ${job.id} has no iteration with id '${spec}' (${flag}); ii job show lists each iteration's id.`,
  );
}

function pickIteration(job: Job, flag: string, spec: string): { change: number; iteration: number } {
  const byId = iterationById(job, flag, spec);
  if (byId) return { change: byId.change, iteration: byId.iteration };
  const p = parseIterationSpec(flag, spec);
  const ch = job.changes[p.change - 1];
  if (!ch || !ch.commits[p.iteration - 1]) {
    const have = job.changes
      .map((c, i) => (c.commits.length ? `${i + 1}.1-${i + 1}.${c.commits.length}` : null))
      .filter(Boolean);
    throw new UserError(
      `job ${job.id} has no iteration ${spec} (${flag}): it has ${have.length ? have.join(', ') : 'none yet'}.`,
    );
  }
  return p;
}

/**
 * Two iterations the user picked, in either order and across changes: the
 * later one compared with the earlier one.
 */
export function locateIterationPair(job: Job, fromSpec: string, toSpec: string): IterationRef {
  let a = pickIteration(job, '--from', fromSpec);
  let b = pickIteration(job, '--to', toSpec);
  if (a.change > b.change || (a.change === b.change && a.iteration > b.iteration)) [a, b] = [b, a];
  const ref = locateIteration(job, b.change, b.iteration);
  const earlier = job.changes[a.change - 1]!.commits[a.iteration - 1]!;
  return { ...ref, previous: earlier, fromCommit: earlier.commit_id, fromEntry: earlier, from: a };
}

/**
 * Picks an iteration; defaults are the last change with an iteration (a job's
 * last change may have none: the pass that found nothing more to change) and
 * its last iteration.
 */
export function locateIteration(job: Job, change?: number, iteration?: number): IterationRef {
  if (job.changes.length === 0) throw new UserError(`job ${job.id} has no changes yet: nothing to diff.`);
  const ci = change ?? (job.changes.findLastIndex((c) => c.commits.length > 0) + 1 || job.changes.length);
  const ch = job.changes[ci - 1];
  if (!Number.isInteger(ci) || !ch)
    throw new UserError(
      `job ${job.id} has ${job.changes.length} change(s); --change must be 1 to ${job.changes.length}.`,
    );
  if (ch.commits.length === 0) throw new UserError(`change ${ci} of job ${job.id} has no iterations yet.`);
  const k = iteration ?? ch.commits.length;
  const commit = ch.commits[k - 1];
  if (!Number.isInteger(k) || !commit)
    throw new UserError(
      `change ${ci} has ${ch.commits.length} iteration(s); --iteration must be 1 to ${ch.commits.length}.`,
    );
  const previous = k > 1 ? ch.commits[k - 2]! : null;
  let fromEntry: JobCommit | null = previous;
  if (!previous)
    fromEntry =
      job.changes
        .slice(0, ci - 1)
        .reverse()
        .find((c) => c.commits.length > 0)
        ?.commits.at(-1) ?? null;
  const fromCommit = fromEntry ? fromEntry.commit_id : job.base_rev;
  return { change: ci, iteration: k, changeRecord: ch, commit, previous, fromCommit, fromEntry };
}

export interface IterationDiff {
  job_id: string;
  /** The iteration's stable id (the iteration-history spec's IterationDiff.iterationId); '' for a record without one. */
  iteration_id: string;
  /** The id of the iteration it is compared with (the spec's previousIterationId); null against the base. */
  previous_iteration_id: string | null;
  change: number;
  change_id: string;
  iteration: number;
  /** The iteration compared with when the user picked one (--from), else null: the one before. */
  from_iteration: { change: number; iteration: number } | null;
  from_commit: string | null;
  to_commit: string;
  stage: { from: JobStage | null; to: JobStage | null };
  status: { from: JobStatus | null; to: JobStatus | null };
  files_added: string[];
  files_modified: string[];
  files_removed: string[];
  /** Tokens and cost this iteration spent. */
  usage_delta: Usage;
  tests_passed: boolean | null;
  review: JobCommit['review'];
  summary: string;
  /**
   * True when `summary` is the one stored with the iteration when it ended
   * (JobCommit.diff_summary); false when computed now: asked to (--recompute),
   * a pair of iterations (--from/--to), or an iteration still open or
   * recorded before summaries were stored.
   */
  summary_stored: boolean;
}

export interface DiffOptions {
  /** Compute the summary even when the iteration has one stored. */
  recompute?: boolean;
}

function usageDelta(from: IterationSnapshot | null, to: IterationSnapshot | null, fallback: Usage): Usage {
  if (!from || !to) return fallback;
  return {
    input_tokens: to.usage.input_tokens - from.usage.input_tokens,
    output_tokens: to.usage.output_tokens - from.usage.output_tokens,
    cost: Math.round((to.usage.cost - from.usage.cost) * 1e6) / 1e6,
  };
}

const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;

const outcome = (c: JobCommit | null): string => (c ? commitOutcome(c) : 'none');

/**
 * The diff of an iteration against the previous one. `files` is the git file
 * list between the two commits when it could be read; without it the lists
 * come from the snapshots (the change's files so far, before and after).
 */
export function iterationDiff(
  job: Job,
  ref: IterationRef,
  files: FileStat[] | null,
  o: DiffOptions = {},
): IterationDiff {
  const { commit, previous } = ref;
  const from = previous?.after ?? commit.before;
  const to = commit.after;
  let added: string[];
  let modified: string[];
  let removed: string[];
  if (files) {
    const pick = (s: FileStat['status']) =>
      files
        .filter((f) => f.status === s)
        .map((f) => f.path)
        .sort();
    added = pick('added');
    modified = pick('modified');
    removed = pick('removed');
  } else {
    const snap = to ?? commit.before;
    const before = new Set([...(from?.files_created ?? []), ...(from?.files_modified ?? [])]);
    added = (snap?.files_created ?? []).filter((f) => !before.has(f));
    modified = [
      ...(snap?.files_modified ?? []),
      ...(snap?.files_created ?? []).filter((f) => before.has(f)),
    ].sort();
    removed = snap?.files_removed ?? [];
  }
  const usage = ref.from
    ? usageDelta(from, to, commit.usage ?? ZERO_USAGE)
    : usageDelta(commit.before, to, commit.usage ?? ZERO_USAGE);
  const parts = [
    ref.from
      ? `Change ${ref.from.change}, iteration ${ref.from.iteration} → change ${ref.change}, iteration ${ref.iteration}`
      : `Change ${ref.change}, iteration ${ref.iteration}`,
    `${plural(added.length, 'file')} added, ${modified.length} modified, ${removed.length} removed`,
    `+${usage.input_tokens} input / +${usage.output_tokens} output tokens, +${formatCost(usage.cost)}`,
    ref.from
      ? `${outcome(commit)} (iteration ${ref.from.change}.${ref.from.iteration}: ${outcome(previous)})`
      : `${outcome(commit)} (previous iteration: ${previous ? outcome(previous) : 'none, first of the change'})`,
  ];
  const stored = !ref.from && !o.recompute ? commit.diff_summary : null;
  return {
    job_id: job.id,
    iteration_id: commit.id,
    previous_iteration_id: ref.fromEntry?.id || null,
    change: ref.change,
    change_id: ref.changeRecord.change_id,
    iteration: ref.iteration,
    from_iteration: ref.from ?? null,
    from_commit: ref.fromCommit,
    to_commit: commit.commit_id,
    stage: { from: from?.stage ?? null, to: to?.stage ?? null },
    status: { from: from?.status ?? null, to: to?.status ?? null },
    files_added: added,
    files_modified: modified,
    files_removed: removed,
    usage_delta: usage,
    tests_passed: commit.tests_passed,
    review: commit.review,
    summary: stored ?? parts.join('; ') + '.',
    summary_stored: stored != null,
  };
}

/**
 * The summary of an iteration against the one before it, as stored with the
 * iteration when it ends (the iteration-history spec's completeIteration):
 * the file list from the Vcs (the first of `dirs` that can read it), else
 * from the snapshots, as `ii job diff` computes it.
 */
export async function computeIterationSummary(
  vcs: Pick<Vcs, 'changedFiles'>,
  job: Job,
  ref: IterationRef,
  dirs: string[],
): Promise<string> {
  let files: FileStat[] | null = null;
  if (ref.fromCommit)
    for (const dir of dirs) {
      try {
        files = await vcs.changedFiles(dir, ref.fromCommit, ref.commit.commit_id);
        break;
      } catch {
        files = null;
      }
    }
  return iterationDiff(job, ref, files, { recompute: true }).summary;
}

/** An iteration diff with its code diff, as `ii job diff` prints it and the dashboard shows it. */
export interface LoadedIterationDiff extends IterationDiff {
  /** Unified diff between the two commits, protocol files left out, cut to display limits; '' when unavailable. */
  diff: string;
  /** False when the diff was cut (src/vcs/capped-diff.ts says where, on lines starting "… "). */
  diff_complete: boolean;
  /** Why the git facts could not be read (the file lists then come from the snapshots). */
  diff_error: string | null;
}

/**
 * The one way an iteration diff is computed: the file list and code diff
 * from the Vcs (protocol files left out, its caps kept), the rest from the
 * job. `dirs` are the checkouts to read from, in order (the job's workspace
 * may be gone; the repository keeps every iteration under refs/incrementum).
 */
export async function loadIterationDiff(
  vcs: Pick<Vcs, 'changedFiles' | 'diff'>,
  job: Job,
  ref: IterationRef,
  dirs: string[],
  o: DiffOptions = {},
): Promise<LoadedIterationDiff> {
  let files: FileStat[] | null = null;
  let diff = '';
  let complete = true;
  let diffError: string | null = null;
  if (!ref.fromCommit) diffError = 'no earlier commit to compare with';
  else if (dirs.length === 0) diffError = 'no repository to read the diff from';
  else
    for (const dir of dirs) {
      try {
        files = await vcs.changedFiles(dir, ref.fromCommit, ref.commit.commit_id);
        // Streamed and capped: a 150 MB file neither fills memory nor the screen.
        ({ text: diff, complete } = await vcs.diff(dir, ref.fromCommit, ref.commit.commit_id));
        diffError = null;
        break;
      } catch (err) {
        files = null;
        diff = '';
        complete = true;
        diffError = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'unavailable';
      }
    }
  return { ...iterationDiff(job, ref, files, o), diff, diff_complete: complete, diff_error: diffError };
}
