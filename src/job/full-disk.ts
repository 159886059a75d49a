// Recording a job's end on a disk that filled while it ran.
import { asDiskFull } from '../errors.js';
import type { StateStore } from '../state/api.js';

/**
 * Runs `write` (idempotent: the end of a job, its todo reopened); when it
 * finds the disk full, frees the space the store keeps for this
 * (state/reserve.ts) and runs it once more. Throws what the last try threw.
 */
export function recordDespiteFullDisk<T>(store: StateStore, write: () => T): T {
  try {
    return write();
  } catch (err) {
    if (!asDiskFull(err) || !store.freeReserve()) throw err;
    return write();
  }
}
