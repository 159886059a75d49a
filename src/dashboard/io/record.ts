// Reads what a finished or running job recorded beyond its row: the whole log
// (every agent session, tests with output, stages, verdicts) and its test runs,
// for the `l` overlay and the commit detail. I/O: called by the actions and the
// sync, never by a component.
import { jobEvents, jobLogLines, testRuns } from '../../job-log/log-lines.js';
import type { Job } from '../../model/job.js';
import type { JobRecord } from '../view/state.js';

export function readJobRecord(stateDir: string, job: Job): JobRecord {
  const { events } = jobEvents(stateDir, job.id);
  return {
    log: jobLogLines(job, stateDir, events).map((l) => l.text),
    tests: testRuns(events),
  };
}
