// How a job id is shown. ii makes job ids of 8 hex characters (state/ids.ts),
// so 8 is the whole id: what the board shows is what `ii job show` prints and
// takes, and a cut id never turns ambiguous as jobs pile up. An id longer than
// that (an older store's, or a hostile record's) is cut to the same 8.
export const SHORT_JOB_ID = 8;

/** A job id as the board and the CLI show it: at most its first 8 characters. */
export const shortJobId = (id: string): string => id.slice(0, SHORT_JOB_ID);
