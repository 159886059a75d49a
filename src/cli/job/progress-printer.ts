// What `ii job do` prints while a job runs: its events as src/job-log/event-text.ts
// renders them, the stage on the live status line, recorded facts (change,
// iteration, tests, review, commit) as lines, warnings on stderr. Test output,
// agent chatter and the other details go to the event log, not here.
import { eventLines, plainText, type EventLine, type Tone } from '../../job-log/event-text.js';
import type { JobEvent } from '../../model/event.js';
import type { Style } from '../format.js';
import type { Progress } from '../progress.js';

export interface ProgressState {
  /** The last final commit made (the `commit` stage's describe). */
  finalCommit: string | null;
}

/** A line with its spans coloured by tone. */
export function styledText(l: EventLine, st: Style): string {
  const colour: Record<Tone, (s: string) => string> = {
    stage: st.cyan,
    good: st.green,
    bad: st.red,
    warn: st.yellow,
  };
  return l.spans.map((s) => (s.tone ? colour[s.tone](s.text) : s.text)).join('');
}

/** Turns the job's events into progress lines; returns the handler and what it saw. */
export function progressPrinter(
  progress: Progress,
  st: Style,
  err: (line: string) => void = (l) => process.stderr.write(l + '\n'),
): { onEvent: (e: JobEvent) => void; state: ProgressState } {
  const state: ProgressState = { finalCommit: null };
  const onEvent = (e: JobEvent) => {
    if (e.type === 'committed') state.finalCommit = e.commit_id;
    for (const l of eventLines(e)) {
      if (l.kind === 'stage') progress.stage(styledText(l, st));
      else if (l.kind === 'fact') progress.line(styledText(l, st));
      else if (l.kind === 'warning') err(st.yellow(`warning: ${plainText(l)}`));
    }
  };
  return { onEvent, state };
}
