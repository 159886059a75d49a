// Reads what a finished or running job recorded beyond its row: the whole log
// (every agent session, tests with output, stages, verdicts) and its test runs,
// for the `l` overlay and the commit detail. I/O: called by the actions and the
// sync, never by a component.
import { jobEvents, jobLogLines, testRuns } from '../../job-log/log-lines.js';
import { storedEventsAreTheRecord, type StoredJobLog } from '../../job-log/store-source.js';
import type { Job } from '../../model/job.js';
import type { JobRecord } from '../view/state.js';

/** `stored`: the shared store's copy of the job's log, read where the files here are not all of it (a job of another machine). */
export function readJobRecord(stateDir: string, job: Job, stored?: StoredJobLog | null): JobRecord {
  const { events } = storedEventsAreTheRecord(stateDir, job, stored)
    ? stored.parsedEvents()
    : jobEvents(stateDir, job.id);
  return {
    log: jobLogLines(job, stateDir, events, stored).map((l) => l.text),
    tests: testRuns(events),
  };
}
