// Answering a permission request a job is waiting on, from any process
// (`ii job answer`, the board). The answer goes through the store, as abandon
// goes through a control request: the job's runner polls its open request
// and replies to the agent once it is closed (job/ask-wait.ts).
import { UserError } from '../errors.js';
import type { AskAnswer, PermissionAsk } from '../model/permission-ask.js';
import type { AsyncStateStore } from '../state/async-api.js';

/** Longest note kept: it goes back to the agent in its transcript, not as a document. */
export const MAX_NOTE_CHARS = 2000;

/**
 * Records `answer` (and a note for the agent) on the open request of job
 * `jobId` (an exact id: resolve a prefix first) and returns the closed
 * request. `askId`: that request only, the one the person saw; without it,
 * the job's open request. Throws a UserError when the job is unknown, not
 * active, has no open request, or the request was closed meanwhile (timed
 * out, answered): a request asked again after a timeout is never answered
 * with what was meant for the earlier one.
 */
export async function answerAsk(o: {
  store: AsyncStateStore;
  jobId: string;
  answer: AskAnswer;
  note?: string | null;
  askId?: number;
}): Promise<PermissionAsk> {
  const { store, jobId, answer } = o;
  const job = await store.jobs.get(jobId);
  if (!job) throw new UserError(`no job ${jobId}: see ii job list.`);
  if (job.status !== 'active')
    throw new UserError(`job ${job.id} is ${job.status}: only an active job waits for an answer.`);
  if (o.askId !== undefined) {
    const seen = await store.asks.get(o.askId);
    if (!seen || seen.job_id !== job.id)
      throw new UserError(
        `job ${job.id} has no request ${o.askId}: ii job show ${job.id} shows its question.`,
      );
    if (seen.outcome !== null)
      throw new UserError(
        `request ${o.askId} of job ${job.id} was ${seen.outcome} already: nothing sent. ii job show ${job.id} shows what it waits on now.`,
      );
  }
  const ask = o.askId !== undefined ? await store.asks.get(o.askId) : await store.asks.openFor(job.id);
  if (!ask)
    throw new UserError(
      `job ${job.id} is not waiting for an answer (no open permission request): ii job list shows waiting jobs.`,
    );
  const note = o.note?.trim() ? o.note.trim().slice(0, MAX_NOTE_CHARS) : null;
  const closed = await store.asks.close(ask.id, answer, note);
  if (!closed) {
    const now = await store.asks.get(ask.id);
    throw new UserError(
      `job ${job.id}'s request was ${now?.outcome ?? 'closed'} before this answer reached it; see ii job show ${job.id}.`,
    );
  }
  return closed;
}
