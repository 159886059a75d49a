// The shared store's copy of a job's log, for `ii job logs` of a job whose
// files are not on this machine (it ran on another), or whose events file
// here is not the whole log (a landing or an abandon on another machine
// added to it in the store): read only when the store is shared (II_DATABASE_URL).
import {
  logIsElsewhere,
  readStoredEvents,
  readStoredLog,
  storedEventsAreTheRecord,
  type StoredJobLog,
} from '../../job-log/store-source.js';
import type { Job } from '../../model/job.js';
import { databaseUrl, openAsyncStateStore } from '../../state/open-async.js';

/** The job's log from the shared store, or null (a local store, or every file is here); a store that cannot be read is told in `warn`. */
export async function storedLogIfNeeded(
  stateDir: string,
  job: Job,
  warn: (message: string) => void,
): Promise<StoredJobLog | null> {
  const url = databaseUrl();
  if (url === null) return null;
  // Its files all here: the store's events only, and only where they have
  // more than the file (a landing or an abandon on another machine).
  const whole = logIsElsewhere(stateDir, job);
  if (!whole && job.status === 'active') return null; // written here as it runs: the file is the record
  try {
    const store = await openAsyncStateStore({ dir: stateDir, url });
    try {
      if (whole) return await readStoredLog(store.logs, job.id);
      const events = await readStoredEvents(store.logs, job.id);
      return storedEventsAreTheRecord(stateDir, job, events) ? events : null;
    } finally {
      await store.close();
    }
  } catch (err) {
    warn(
      `job ${job.id}'s log is not all in this machine's state dir, and the shared store's copy could not be read: ${(err as Error).message}`,
    );
    return null;
  }
}
