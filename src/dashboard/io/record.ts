// Reads what a finished or running job recorded beyond its row: the whole log
// (every agent session, tests with output, stages, verdicts) and its test runs,
// for the `l` overlay and the commit detail. I/O: called by the actions and the
// sync, never by a component.
import { existsSync } from 'node:fs';
import { jobEvents, jobLogLines, testRuns } from '../../job-log/log-lines.js';
import type { StoredJobLog } from '../../job-log/store-source.js';
import { eventsFile } from '../../state/paths.js';
import type { Job } from '../../model/job.js';
import type { JobRecord } from '../view/state.js';

/** `stored`: the shared store's copy of the job's log, read where its files are not here (a job of another machine). */
export function readJobRecord(stateDir: string, job: Job, stored?: StoredJobLog | null): JobRecord {
  const { events } =
    stored && !existsSync(eventsFile(stateDir, job.id)) ? stored.parsedEvents() : jobEvents(stateDir, job.id);
  return {
    log: jobLogLines(job, stateDir, events, stored).map((l) => l.text),
    tests: testRuns(events),
  };
}
