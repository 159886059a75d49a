// Whether a job waits for a person, and how a wait reads: no zod here, so
// ii job list, the board's cards and the event texts can ask without loading
// the request's schema (model/permission-ask.ts).

/** An active job with an open request waits for a person (`waiting` in ii job list, Needs you on the board). */
export const isWaiting = (job: { status: string; asking: unknown }): boolean =>
  job.status === 'active' && job.asking != null;

/** A wait for people: "12s", "4 min", "1 h 05 min". */
export function waitText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
