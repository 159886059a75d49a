// Which iteration the `d` key and the commit detail are about, and what it is
// compared with: selectors on the dashboard's state, read by the actions and
// the views alike.
import type { Job } from '../../model/job.js';
import { drilledJob, selectedCard, selectedJob } from './board.js';
import { iterationLabel, type DashboardState, type IterationId } from './state.js';

/** The iteration the `d` key and the commit detail are about (1-based change and iteration). */
export function diffTarget(s: DashboardState): { job: Job; change: number; iteration: number } | null {
  const job = s.nav.level === 'jobs' ? selectedJob(s) : drilledJob(s);
  if (!job || job.changes.length === 0) return null;
  // The last change with an iteration: a job's last change may have none
  // (the pass that found nothing more to change).
  let change = job.changes.findLastIndex((c) => c.commits.length > 0) + 1 || job.changes.length;
  let iteration: number | null = null;
  if (s.nav.change != null) change = s.nav.change + 1;
  // The card under the cursor, not the stored selection: a cursor never moved
  // has no key yet, but it still sits on a card, and that is what the user sees.
  if (s.nav.iteration != null) iteration = s.nav.iteration + 1;
  else if (s.nav.level === 'commits') {
    const key = selectedCard(s)?.key;
    if (key != null) iteration = Number(key) + 1;
  } else if (s.nav.level === 'changes') {
    const key = selectedCard(s)?.key;
    if (key != null) change = Number(key) + 1;
  }
  const ch = job.changes[change - 1];
  if (!ch || ch.commits.length === 0) return null;
  return { job, change, iteration: iteration ?? ch.commits.length };
}

/** What `d` shows: the target iteration, compared with the marked one when the mark is another iteration of its job. */
export function diffRequest(
  s: DashboardState,
): { job: Job; change: number; iteration: number; from: IterationId | null } | null {
  const t = diffTarget(s);
  if (!t) return null;
  const m = s.nav.mark;
  const from =
    m && m.jobId === t.job.id && (m.change !== t.change || m.iteration !== t.iteration)
      ? { change: m.change, iteration: m.iteration }
      : null;
  return { ...t, from };
}

/** "1.1 → 1.3", earlier first, whichever was marked: the pair as `ii job diff --from --to` compares it. */
export function pairLabel(a: IterationId, b: IterationId): string {
  const [x, y] =
    a.change < b.change || (a.change === b.change && a.iteration <= b.iteration) ? [a, b] : [b, a];
  return `${iterationLabel(x)} → ${iterationLabel(y)}`;
}
