// What ii run shows: one line per running job and a total. Pure (the
// snapshot in, lines out), so the terminal view and the plain log agree.
import type { BacklogSnapshot, RunningJob } from '../../job/backlog-runner.js';
import { shownLine } from '../../text/shown.js';
import { formatCost } from '../../model/usage.js';
import { elapsed } from '../progress.js';

/** "a1b2c3d4 Add login · testing · iter 2 · 1m12s · $0.0123" */
export function jobLine(r: RunningJob, now: number, width = 80): string {
  const title = shownLine(r.todo.title);
  if (!r.job) return clip(`${r.todo.id} ${title} · starting`, width);
  const j = r.job;
  const parts = [
    j.stage,
    `iter ${Math.max(1, j.iteration)}`,
    elapsed(now - Date.parse(j.started_at)),
    formatCost(j.cost),
  ];
  const tail = ` · ${parts.join(' · ')}`;
  const head = `${r.todo.id} `;
  return head + clip(title, Math.max(8, width - head.length - tail.length)) + tail;
}

/** "run: 2/3 slots · 5 ready · 1 blocked · 4 done · 1 failed" */
export function totalLine(s: BacklogSnapshot): string {
  const parts = [
    `run: ${s.used}/${s.slots} slots${s.others ? ` (${s.others} started elsewhere)` : ''}`,
    `${s.ready} ready`,
    `${s.blocked} blocked`,
    `${s.completed} done`,
    `${s.failed} failed`,
  ];
  if (s.standby !== null) parts.push('next runner on standby');
  if (s.stopping) parts.push('stopping: no new jobs');
  return parts.join(' · ');
}

/**
 * A failure reason in one line: its first non-empty line, and when that only
 * introduces what follows (it ends in a colon, as "its last output on
 * stderr:" does), the first line after it too, which says what went wrong.
 */
export function reasonLine(reason: string): string {
  const lines = reason
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const first = lines[0] ?? '';
  return first.endsWith(':') && lines[1] ? `${first} ${lines[1]}` : first;
}

function clip(s: string, width: number): string {
  return s.length <= width ? s : `${s.slice(0, Math.max(0, width - 1))}…`;
}
