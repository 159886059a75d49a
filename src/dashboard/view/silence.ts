// The live pane's word on an agent that has gone quiet in its turn: a pane
// showing only "● agent: implement" for minutes reads as working, when the
// agent may be stuck retrying a model it cannot reach.

/** How long an agent may say nothing in its turn before the pane says so. */
export const SILENCE_MS = 30_000;

/** The pane's last line while the agent has been quiet SILENCE_MS or more, else null. */
export function silenceLine(quietSince: number | null, now: number): string | null {
  if (quietSince === null || now - quietSince < SILENCE_MS) return null;
  return `  (no output from the agent for ${Math.floor((now - quietSince) / 1000)} s)`;
}
