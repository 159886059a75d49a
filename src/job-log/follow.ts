// `ii job logs --follow`: a running job's log as it grows, a line at a time.
// Events are rendered as event-text.ts renders them; an agent session's
// transcript as transcript-text.ts does, its lines printed once final: the
// agent's message or thought that is still streaming is held back until
// something else comes after it (its lines would otherwise still change).
// Text is redacted and escaped here (src/text), as in the whole log.
import type { JobEvent } from '../model/event.js';
import { isObj } from '../model/obj.js';
import { visibleLine } from '../text/sanitize.js';
import { shownText } from '../text/shown.js';
import { eventLines, logText } from './event-text.js';
import { rpcOf, transcriptText } from './transcript-text.js';

/** Whether a transcript entry is a chunk of a message or thought that may go on. */
function streaming(entry: unknown): boolean {
  const m = rpcOf(entry);
  if (!m || m.method !== 'session/update' || !isObj(m.params) || !isObj(m.params.update)) return false;
  const kind = m.params.update.sessionUpdate;
  return kind === 'agent_message_chunk' || kind === 'agent_thought_chunk';
}

interface Session {
  id: string;
  entries: unknown[];
  /** Lines of its rendering already given. */
  given: number;
}

/** Turns what is appended to a job's log into the lines to print next. */
export class LogFollower {
  private readonly sessions = new Map<string, Session>();
  private count = 0;
  /** Set once the job's finished event has been seen. */
  finished = false;

  /**
   * Where the whole log printed before left off: the agent sessions it
   * showed (in order) with the entries of each, so their next lines follow
   * on from what was printed.
   */
  constructor(printed: { id: string; entries: unknown[] }[] = []) {
    for (const p of printed) {
      const s: Session = { id: p.id, entries: [...p.entries], given: 0 };
      s.given = transcriptText(s.entries).length;
      this.sessions.set(p.id, s);
      this.count++;
    }
  }

  /** The lines an appended event reads as (an agent's start opens its section). */
  event(e: JobEvent): string[] {
    if (e.type === 'finished') this.finished = true;
    if (e.type === 'agent_start') {
      if (this.sessions.has(e.agent_session_id)) return [];
      this.sessions.set(e.agent_session_id, { id: e.agent_session_id, entries: [], given: 0 });
      this.count++;
      return [
        '',
        `=== ${this.count}. ${e.purpose} · agent session ${visibleLine(e.agent_session_id)} · ${e.ts} ===`,
      ];
    }
    return eventLines(e).map((l) => logText(l));
  }

  /** The final lines that entries appended to an agent session's transcript add. */
  transcript(agentSessionId: string, entries: unknown[]): string[] {
    let s = this.sessions.get(agentSessionId);
    if (!s) this.sessions.set(agentSessionId, (s = { id: agentSessionId, entries: [], given: 0 }));
    s.entries.push(...entries);
    return this.take(s, false);
  }

  /** Whatever is held back (the job ended, or the follow stops). */
  rest(): string[] {
    return [...this.sessions.values()].flatMap((s) => this.take(s, true));
  }

  private take(s: Session, all: boolean): string[] {
    let upto = s.entries.length;
    if (!all) while (upto > 0 && streaming(s.entries[upto - 1])) upto--;
    const lines = transcriptText(s.entries.slice(0, upto));
    if (lines.length <= s.given) return [];
    const fresh = lines.slice(s.given);
    s.given = lines.length;
    // Redacted as one text: a key block spans lines.
    return shownText(fresh.join('\n')).split('\n');
  }
}
