// Where each field of a PermissionAsk is stored (codec.ts): read by the ask
// store and by the job loader (a job's open request), written as JSON text
// into a job's listing text (job-codec.ts).
import type { AskOption, PermissionAsk } from '../../model/permission-ask.js';
import { plain, stored, table, text } from './codec.js';

export const ASK = table<PermissionAsk>({
  id: plain(),
  job_id: plain(),
  tool_kind: plain(),
  title: text(),
  command: plain(),
  paths: stored((): string[] => []),
  diff_preview: plain(),
  options: stored((): AskOption[] => []),
  asked_at: plain(),
  answered_at: plain(),
  outcome: plain(),
  note: plain(),
  waited_ms: plain(),
});
