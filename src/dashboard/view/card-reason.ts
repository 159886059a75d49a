// The selected card's whole reason, for the pane under the jobs board: a
// card is a dozen cells wide at 80 columns, so a failed job's card read
// `the imple…` and a refused landing's `not landed: main is check…`. The
// pane has the reason's first line whole (wrapped), then its other lines.
import { wordWrap } from '../../text/cells.js';
import { shortJobId } from '../../model/job-id.js';
import { shownLine, shownText } from '../../text/shown.js';
import { landingLine, selectedCard, selectedJob, TODO_KEY } from './board.js';
import type { DashboardState } from './state.js';

/**
 * The pane's text: its title line, then the reason's lines (shown: redacted,
 * escaped), first non-empty line first; null when the card has no reason.
 * One string, so a selector of it re-renders only when it changes.
 */
export function cardReason(s: DashboardState): string | null {
  if (s.nav.level !== 'jobs') return null;
  const card = selectedCard(s);
  if (!card) return null;
  if (card.key.startsWith(TODO_KEY)) {
    // A blocked todo: what holds it, whole (the card cuts it).
    return card.detail.startsWith('blocked')
      ? `── todo ${card.key.slice(TODO_KEY.length)} · ${card.title}\n${card.detail}`
      : null;
  }
  const job = selectedJob(s);
  if (!job) return null;
  const head = (what: string) =>
    `── job ${shortJobId(job.id)} ${what} · ${shownLine(s.todoTitles[job.todo_id] ?? job.todo_id)}`;
  if (job.status === 'failed' || (job.status === 'abandoned' && job.failure_reason)) {
    const lines = shownText(job.failure_reason ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    return [head(job.status), ...(lines.length ? lines : [`the job ${job.status}`])].join('\n');
  }
  if (job.status === 'completed' && (job.landing?.state === 'refused' || job.land_conflict))
    return [head('not landed'), landingLine(job) ?? ''].join('\n');
  return null;
}

/** The pane's rows at a width: its title (cut to one row), the reason word-wrapped, and how many rows its first line takes. */
export function reasonRows(text: string, width: number): { title: string; rows: string[]; first: number } {
  const [title = '', ...lines] = text.split('\n');
  const wrapped = lines.map((l) => wordWrap(l, width));
  return { title, rows: wrapped.flat(), first: wrapped[0]?.length ?? 0 };
}

/**
 * The pane's height under a board `height` rows tall: every row of the
 * reason when it has the room (up to 40% of the body), and always its first
 * line whole, leaving the board its names row and a card.
 */
export function reasonPaneHeight(text: string, width: number, height: number): number {
  const { rows, first } = reasonRows(text, width);
  const want = Math.min(1 + rows.length, Math.max(1 + first, Math.floor(height * 0.4)));
  return Math.max(0, Math.min(want, height - 3));
}
