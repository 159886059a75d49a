// Files that a job's own [workspace] setup and baseline tests leave in the
// workspace without git ignoring them (node_modules/ of a project with no
// .gitignore, a coverage/ report): every iteration commit would take them
// as the agent's work, and an agent that changed nothing would still seem to
// change files, change after change. Said before any agent turn instead.
/** How many of the paths a message names. */
const NAMED = 5;

/** "node_modules/, coverage/ and 1 more" for a message. */
export function namedPaths(paths: string[]): string {
  // Shown through src/text where printed, as every job reason is.
  const shown = paths.slice(0, NAMED);
  const more = paths.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}

/** What to do about them, for a job's reason and for ii doctor. */
export const LEFTOVERS_FIX =
  'Add them to .gitignore and commit it (or make the setup and tests write elsewhere), then run the job again: ' +
  'every commit of the job would take them as the work of the agent.';

export function leftoversReason(paths: string[]): string {
  return `the workspace setup and the baseline tests leave files git does not ignore: ${namedPaths(paths)}. ${LEFTOVERS_FIX} No agent turn was spent.`;
}
