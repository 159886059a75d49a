// The runner's side of a permission request sent to a person: store it (the
// job shows as waiting), poll the store for the answer another process
// records (answerAsk, as abandon travels through a control request), and end
// it as a timeout ([agent] ask-timeout) or cancelled (the turn was cancelled,
// the job stopped) when nobody answers. Whichever ending the store records
// first is the one the agent gets.
import type { AskReply } from '../agent/types.js';
import type { NewJobEvent } from '../model/event.js';
import type { AskOutcome, NewPermissionAsk, PermissionAsk } from '../model/permission-ask.js';
import { waitText } from '../model/waiting.js';
import type { AsyncStateStore } from '../state/async-api.js';

/** How often the store is read for an answer: the job carries on well within a second of one. */
export const ASK_POLL_MS = 200;

export async function waitForPerson(o: {
  store: AsyncStateStore;
  jobId: string;
  ask: NewPermissionAsk;
  timeoutMs: number;
  /** Aborts when the turn is cancelled or the session closes. */
  signal: AbortSignal;
  /** Aborts when the job is stopped (abandon, failure). */
  stopped: AbortSignal;
  event: (e: NewJobEvent) => void;
  pollMs?: number;
}): Promise<AskReply> {
  const { store, jobId } = o;
  const open = await store.asks.open(jobId, o.ask);
  o.event({
    type: 'permission_asked',
    ask_id: open.id,
    tool_kind: open.tool_kind,
    title: open.title,
    command: open.command,
    paths: open.paths,
  });
  const ended = (a: PermissionAsk): AskReply => {
    o.event({
      type: 'permission_answered',
      ask_id: a.id,
      outcome: a.outcome!,
      note: a.note,
      waited_ms: a.waited_ms ?? 0,
    });
    return { outcome: a.outcome!, note: a.outcome === 'timeout' ? null : a.note };
  };
  /** Ends it with `outcome` unless another ending got there first; either way, the ending recorded. */
  const close = async (outcome: AskOutcome, note: string): Promise<AskReply> => {
    const closed = (await store.asks.close(open.id, outcome, note)) ?? (await store.asks.get(open.id));
    return closed ? ended(closed) : { outcome, note: null };
  };
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    let now: PermissionAsk | null;
    try {
      now = await store.asks.get(open.id);
    } catch {
      now = null; // a busy database: the next poll reads it
    }
    if (now?.outcome) return ended(now);
    if (o.signal.aborted || o.stopped.aborted)
      return close('cancelled', 'the job stopped or its turn ended while it waited');
    if (Date.now() >= deadline)
      return close('timeout', `no answer within ${waitText(o.timeoutMs)} ([agent] ask-timeout): rejected`);
    await pause(Math.min(o.pollMs ?? ASK_POLL_MS, Math.max(1, deadline - Date.now())), [o.signal, o.stopped]);
  }
}

/** Resolves after `ms`, or as soon as a signal aborts. */
function pause(ms: number, signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const s of signals) s.addEventListener('abort', done, { once: true });
  });
}
