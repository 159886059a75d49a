// Whole numbers with their thousands grouped, as en-US writes them
// (12,345). Number#toLocaleString gives the same text, but its first call
// in a process loads ICU's number formatting: 20 to 24 ms of CPU on a
// 2-core machine here, paid by every job runner as it writes the job's
// journal (its token counts), on the way to the next job's start.
const GROUPS = /\B(?=(\d{3})+(?!\d))/g;

/** "12,345" for 12345; a number that is not a safe integer as toLocaleString('en-US') writes it. */
export function grouped(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  return String(n).replace(GROUPS, ',');
}
