// What `ii job do` prints before the loop starts (job subcommand spec, step 6):
// the workspace (name and path, the base commit and the ref it was taken
// from), the session, the change the first iteration works in, and the whole
// todo. Pure; the todo's text is the user's or an agent's, so it is shown
// through src/text.
import { basename } from 'node:path';
import type { Todo } from '../../model/todo.js';
import { visibleLine } from '../../text/sanitize.js';
import { shownLine, shownLines } from '../../text/shown.js';
import type { Style } from '../format.js';

export interface JobContext {
  jobId: string;
  todo: Todo;
  sessionId: string;
  /** The workspace's name (its branch, as `ii workspace list` shows it); else its folder's. */
  workspaceName?: string | undefined;
  workspacePath: string;
  baseRev: string;
  /** What the base was taken from: the checked-out branch, --rev, or HEAD (detached). */
  baseRef?: string | undefined;
  changeId: string;
  retriedFrom?: string | undefined;
}

export function jobContextLines(c: JobContext, st: Style): string[] {
  const { todo } = c;
  const out = [
    // The first line's shape is what scripts (and the tests) read the job id from.
    st.bold(`job ${c.jobId}`) + ` for todo ${todo.id}: ${shownLine(todo.title)}`,
    `  workspace: ${visibleLine(c.workspaceName ?? basename(c.workspacePath))}  ${visibleLine(c.workspacePath)}  at ${c.baseRev.slice(0, 10)}${c.baseRef ? ` (from ${visibleLine(c.baseRef === 'HEAD' ? 'HEAD, detached' : c.baseRef)})` : ''}`,
    `  session:   ${visibleLine(c.sessionId)}`,
    `  change:    ${visibleLine(c.changeId)}`,
  ];
  if (c.retriedFrom) out.push(`  retrying:  job ${c.retriedFrom}`);
  out.push(
    `  todo:      ${todo.id}`,
    `    title:       ${shownLine(todo.title)}`,
    `    type:        ${todo.type}`,
    `    priority:    ${todo.priority}`,
  );
  const description = todo.description.trim();
  if (!description) out.push('    description: (none)');
  else out.push('    description:', ...shownLines(description).map((l) => (l ? `      ${l}` : '')));
  return out;
}
