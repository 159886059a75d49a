// The title of an agent session: the job-subcommand spec makes a job's
// session "using a topic that includes the job id", so the agent's own
// session list (opencode's, Claude Code's, ...) leads back to the job.
import type { AgentPurpose } from '../model/job.js';

/** Longest title: agents cut theirs (claude-agent-acp at 256), and the first prompt's head is read by kind. */
export const SESSION_TITLE_MAX = 120;

/** "ii job <id> <purpose>: <todo title>" on one line, the todo's title cut to fit. */
export function agentSessionTitle(jobId: string, purpose: AgentPurpose, todoTitle: string): string {
  const head = `ii job ${jobId} ${purpose}: `;
  // One line without control characters: it is a title, and the first line of a prompt.
  const title = todoTitle
    .replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const room = Math.max(0, SESSION_TITLE_MAX - head.length);
  const chars = [...title];
  return head + (chars.length > room ? chars.slice(0, Math.max(0, room - 1)).join('') + '…' : title);
}
