// The shared store's copy of a job's log, for `ii job logs` of a job whose
// files are not on this machine (it ran on another): read only when the
// store is shared (II_DATABASE_URL) and some of the job's files are missing.
import { logFilesMissing, readStoredLog, type StoredJobLog } from '../../job-log/store-source.js';
import type { Job } from '../../model/job.js';
import { databaseUrl, openAsyncStateStore } from '../../state/open-async.js';

/** The job's log from the shared store, or null (a local store, or every file is here); a store that cannot be read is told in `warn`. */
export async function storedLogIfNeeded(
  stateDir: string,
  job: Job,
  warn: (message: string) => void,
): Promise<StoredJobLog | null> {
  const url = databaseUrl();
  if (url === null || !logFilesMissing(stateDir, job)) return null;
  try {
    const store = await openAsyncStateStore({ dir: stateDir, url });
    try {
      return await readStoredLog(store.logs, job.id);
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
