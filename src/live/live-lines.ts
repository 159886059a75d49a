// How events and agent activity read in the live pane (pure).
import type { AgentActivity } from '../agent/types.js';
import type { FileChange } from '../model/job.js';
import type { JobEvent } from '../state/events.js';
import type { RunnerEvent } from '../job/runner-types.js';

const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? '' : JSON.stringify(v));

/** One event-log entry as a pane line, or null for what the pane does not show (test output, tracker). */
export function eventLine(e: JobEvent): string | null {
  switch (e.type) {
    case 'stage':
      return e.status ? `■ job ${str(e.status)}${e.reason ? `: ${str(e.reason)}` : ''}` : `→ ${str(e.to)}`;
    case 'test_start':
      return `$ ${str(e.command)}`;
    case 'test_end':
      return `  exit ${str(e.exit_code)} (${str(e.command)})`;
    case 'agent_start':
      return `● agent: ${str(e.purpose)}`;
    case 'info':
      return `  ${str(e.message)}`;
    case 'warning':
    case 'error':
      return `! ${str(e.message)}`;
    default:
      return null;
  }
}

/** A tracker entry from an event, when the event is one. */
export function fileOfEvent(e: JobEvent): FileChange | null {
  if (e.type !== 'file_change' || typeof e.path !== 'string') return null;
  return {
    path: e.path,
    is_new: e.is_new === true,
    is_deleted: e.is_deleted === true,
    additions: typeof e.additions === 'number' ? e.additions : 0,
    deletions: typeof e.deletions === 'number' ? e.deletions : 0,
  };
}

export function activityLines(a: AgentActivity): string[] {
  switch (a.kind) {
    case 'message':
      return a.text
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => `  ${l}`);
    case 'thought':
      return [];
    case 'tool':
      return [`  [${a.toolKind ?? 'tool'}] ${a.title}${a.status ? ` (${a.status})` : ''}`];
    case 'plan':
      return ['  plan:', ...a.entries.map((e) => `    - ${e}`)];
    case 'usage':
      return [];
    case 'warning':
      return [`! ${a.message}`];
  }
}

/** A runner's in-process event as pane lines. */
export function runnerEventLines(e: RunnerEvent): string[] {
  switch (e.type) {
    case 'stage':
      return [`→ ${e.to}`];
    case 'agent_start':
      return [`● agent: ${e.purpose}`];
    case 'activity':
      return activityLines(e.activity);
    case 'test_start':
      return [`$ ${e.command}`];
    case 'test_end':
      return [`  exit ${e.result.exit_code} (${e.result.command})`];
    case 'review':
      return [`● ${e.project ? 'project ' : ''}review: ${e.review.outcome}`];
    case 'committed':
      return [`● committed ${e.commit_id.slice(0, 7)}`];
    case 'warning':
      return [`! ${e.message}`];
    case 'finished':
      return [`■ job ${e.job.status}`];
    default:
      return [];
  }
}
