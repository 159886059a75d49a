import { createHash, randomBytes } from 'node:crypto';

/** A short hash id: 8 hex characters from the seed, the time and randomness. */
export function shortId(seed: string): string {
  return createHash('sha256')
    .update(`${seed}\0${Date.now()}\0${process.pid}\0${randomBytes(8).toString('hex')}`)
    .digest('hex')
    .slice(0, 8);
}

export const nowIso = (): string => new Date().toISOString();

/**
 * An iteration's stable id (JobCommit.id): 12 hex characters, random, so it
 * names one iteration of one job for good; typed in `ii job diff --from`.
 */
export const iterationId = (): string => randomBytes(6).toString('hex');
