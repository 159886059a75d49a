// What `ii job do` prints while a job runs: one line per stage transition and
// per recorded fact (change, iteration, tests, review, commit); warnings on
// stderr. Test output and agent chatter go to the event log, not here. What
// the agent and the tests wrote (file names, review comments, messages, test
// commands, warnings) is redacted and escaped (src/text) before it is printed.
import type { RunnerEvent, RunnerStage } from '../job/runner-types.js';
import { visibleLine } from '../text/sanitize.js';
import { shownLine, shownText } from '../text/shown.js';
import type { Style } from './format.js';
import type { Progress } from './progress.js';

const STAGE_LABEL: Record<RunnerStage, string> = {
  implementing: 'implementing',
  testing: 'testing',
  reviewing: 'reviewing',
  committing: 'committing',
  'project-review': 'project review',
};

const short = (sha: string) => sha.slice(0, 10);
/** The first non-blank line, shown (the whole text is redacted first: a key block spans lines). */
const firstLine = (s: string) =>
  shownText(s)
    .split('\n')
    .find((l) => l.trim())
    ?.trim() ?? '';

export interface ProgressState {
  /** The last final commit made (the `commit` stage's describe). */
  finalCommit: string | null;
}

/** Turns runner events into progress lines; returns the handler and what it saw. */
export function progressPrinter(
  progress: Progress,
  st: Style,
  err: (line: string) => void = (l) => process.stderr.write(l + '\n'),
): { onEvent: (e: RunnerEvent) => void; state: ProgressState } {
  const state: ProgressState = { finalCommit: null };
  let pendingChange: string | null = null;
  const onEvent = (e: RunnerEvent) => {
    switch (e.type) {
      case 'stage':
        progress.stage(st.cyan(`→ ${STAGE_LABEL[e.to]}`));
        break;
      case 'change_started':
        // Printed with its first iteration: a change the agent leaves empty
        // (the pass that leads to the project review) is never recorded.
        pendingChange = `change ${e.number}: ${visibleLine(e.change_id)}`;
        break;
      case 'iteration':
        if (pendingChange) progress.line(pendingChange);
        pendingChange = null;
        progress.line(
          `  iteration ${e.iteration}: commit ${short(e.commit_id)} (${e.files.length} file${e.files.length === 1 ? '' : 's'}: ${e.files
            .slice(0, 5)
            .map((f) => visibleLine(f.path))
            .join(', ')}${e.files.length > 5 ? ', …' : ''})`,
        );
        break;
      case 'tests': {
        const failed = e.results.filter((r) => r.exit_code !== 0);
        progress.line(
          e.passed
            ? st.green(`  tests passed (${e.results.length} command${e.results.length === 1 ? '' : 's'})`)
            : st.red(
                `  tests failed: ${failed
                  .map(
                    (r) =>
                      `\`${shownLine(r.command)}\` ${r.timed_out_after_s !== undefined ? `timed out after ${r.timed_out_after_s} s` : `exited ${r.exit_code}`}`,
                  )
                  .join(', ')}`,
              ),
        );
        break;
      }
      case 'review': {
        const what = e.project ? 'project review' : 'review';
        const c = firstLine(e.review.comments);
        const colour =
          e.review.outcome === 'ACCEPT' ? st.green : e.review.outcome === 'ABANDON' ? st.red : st.yellow;
        progress.line(`  ${what}: ${colour(e.review.outcome)}${c ? ` — ${c}` : ''}`);
        break;
      }
      case 'committed':
        state.finalCommit = e.commit_id;
        progress.line(`  committed ${short(e.commit_id)}: ${firstLine(e.message)}`);
        break;
      case 'warning':
        err(st.yellow(`warning: ${shownText(e.message)}`));
        break;
      default:
        break;
    }
  };
  return { onEvent, state };
}
