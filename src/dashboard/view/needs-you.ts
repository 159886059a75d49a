// The jobs that wait for a person (an agent's permission request stored on
// the job, `asking`), as the board shows them: which wait, in what order, a
// card's few words and the request in full. Pure; every agent-made field is
// shown escaped and redacted (the agent wrote it: it may carry escapes or a secret).
import { shortJobId } from '../../model/job-id.js';
import type { Job } from '../../model/job.js';
import type { PermissionAsk } from '../../model/permission-ask.js';
import { waitText } from '../../model/waiting.js';
import { alwaysRuleFor, describeAlways } from '../../agent/permission-policy.js';
import { shownLine, shownLines } from '../../text/shown.js';

/** The Needs you column's title (the jobs board, first when some job waits). */
export const NEEDS_YOU = 'Needs you';

/** A job's open request: asked, not yet answered (an answer recorded for the runner closes it here at once). */
export function openAsk(job: Pick<Job, 'status' | 'asking'>): PermissionAsk | null {
  const a = job.asking;
  return job.status === 'active' && a && !a.answered_at && !a.outcome ? a : null;
}

/** The jobs that wait, the longest-waiting first: the order the inbox goes through them. */
export function waitingJobs<J extends Pick<Job, 'id' | 'status' | 'asking'>>(jobs: readonly J[]): J[] {
  return jobs
    .filter((j) => openAsk(j))
    .sort((a, b) => {
      const x = openAsk(a)!;
      const y = openAsk(b)!;
      // Asked in the same millisecond: in the order stored (the row ids
      // count up on both drivers), not by job id, which is random.
      if (x.asked_at !== y.asked_at) return x.asked_at < y.asked_at ? -1 : 1;
      return x.id - y.id || (a.id < b.id ? -1 : 1);
    });
}

/**
 * How many jobs wait (the header's count), per job list: the header's
 * selector runs on every change of the board's store (a new todo too), and
 * going through 1,300 jobs each time showed in a new todo's way to the
 * board (bench/scale.bench.js); each keypress too.
 */
type Asking = Pick<Job, 'status' | 'asking'>;
const waitingCounts = new WeakMap<readonly Asking[], number>();
export function waitingCount(jobs: readonly Asking[]): number {
  let n = waitingCounts.get(jobs);
  if (n === undefined) waitingCounts.set(jobs, (n = jobs.reduce((k, j) => k + (openAsk(j) ? 1 : 0), 0)));
  return n;
}

/** What is asked for, in a few words: the command, else the first path, else the tool's title. */
export function askWhat(ask: PermissionAsk): string {
  const what = ask.command ?? ask.paths[0] ?? ask.title;
  return shownLine(what.replace(/\s+/g, ' ').trim());
}

/** The card's marker: "needs you: execute npm test". */
export function askMarker(ask: PermissionAsk): string {
  return `needs you: ${ask.tool_kind ? `${shownLine(ask.tool_kind)} ` : ''}${askWhat(ask)}`;
}

/** "waited 4 min" for a card: the job's total wait (its open request's time so far included), or null. */
export function waitedNote(job: Job, now: number): string | null {
  const a = openAsk(job);
  const open = a ? Math.max(0, now - Date.parse(a.asked_at)) : 0;
  const total = (job.waited_ms ?? 0) + open;
  return total >= 1000 ? `waited ${waitText(total)}` : null;
}

/**
 * What "allow always" covers, said before it is confirmed: the rule the
 * runner adds (agent/permission-policy.ts), for the rest of this job only.
 */
export function alwaysCovers(ask: PermissionAsk): string {
  const opt = ask.options.find((o) => o.kind === 'allow_always');
  const named = opt ? ` (the agent's option “${shownLine(opt.name)}”)` : '';
  return `Allow always${named}: ${shownLine(describeAlways(alwaysRuleFor(ask)))}, from now on; other jobs still ask.`;
}

/** The request in full, as lines (the ask view): each agent-made field escaped and redacted. */
export function askLines(job: Job, title: string, now: number): string[] {
  const a = openAsk(job);
  if (!a) return [`Job ${shortJobId(job.id)} does not wait for you (answered, timed out or ended).`];
  const out = [
    `Job ${shortJobId(job.id)} · ${shownLine(title)}`,
    `Waiting for ${waitText(now - Date.parse(a.asked_at))} (asked ${a.asked_at})`,
    '',
    `Tool: ${a.tool_kind ? shownLine(a.tool_kind) : '(kind not given)'}`,
    ...shownLines(`Title: ${a.title}`),
  ];
  if (a.command != null) out.push('Command:', ...shownLines(a.command).map((l) => `  ${l}`));
  if (a.paths.length) out.push('Paths:', ...a.paths.map((p) => `  ${shownLine(p)}`));
  if (a.diff_preview) out.push('', 'Diff preview:', ...shownLines(a.diff_preview).map((l) => `  ${l}`));
  out.push(
    '',
    'The agent offered:',
    ...a.options.map((o) => `  ${shownLine(o.name)} (${shownLine(o.kind)})`),
  );
  return out;
}
