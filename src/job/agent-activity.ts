// Which of an agent's live activity becomes a job event. Its text, thoughts,
// tool calls and plan are in its transcript, which `ii job logs` and the
// board render (transcript-text.ts); what the job's event log gains is what
// went wrong with the agent (a refused path or permission, a skipped line of
// its output, a title it would not take), so the progress of `ii job do`,
// the board's kept lines and the journal see it. A new kind of activity gets
// its case here: the switch is exhaustive, so the compiler asks for it.
import type { AgentActivity } from '../agent/types.js';
import type { NewJobEvent } from '../model/event.js';

/** The job event for `a`, from agent session `sessionId`, or null when the transcript is its only record. */
export function activityEvent(a: AgentActivity, sessionId: string): NewJobEvent | null {
  switch (a.kind) {
    case 'warning':
      // Tagged with its session: a reader showing that session's transcript has it there already.
      return { type: 'warning', message: a.message, agent_session_id: sessionId };
    case 'message':
    case 'thought':
    case 'tool':
    case 'plan':
    case 'usage':
      // The transcript has them; usage is recorded on the job when the session ends.
      return null;
    default: {
      const never: never = a;
      return never;
    }
  }
}
