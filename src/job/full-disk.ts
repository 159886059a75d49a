// Recording a job's end on a disk that filled while it ran.
import { asDiskFull } from '../errors.js';
import type { AsyncStateStore } from '../state/async-api.js';

/**
 * Runs `write` (idempotent: the end of a job, its todo reopened); when it
 * finds the disk full, frees the space the store keeps for this
 * (state/reserve.ts) and runs it once more. Throws what the last try threw.
 */
export async function recordDespiteFullDisk<T>(store: AsyncStateStore, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!asDiskFull(err) || !store.freeReserve?.()) throw err;
    return write();
  }
}
