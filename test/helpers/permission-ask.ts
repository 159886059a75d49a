// A permission request as an agent's session/request_permission brings it,
// for the store tests that open one on a job.
import type { NewPermissionAsk } from '../../src/model/permission-ask.js';

export const ASK: NewPermissionAsk = {
  tool_kind: 'execute',
  title: 'Run npm test',
  command: 'npm test',
  paths: [],
  diff_preview: null,
  options: [
    { id: 'a1', name: 'Allow', kind: 'allow_once' },
    { id: 'r1', name: 'Reject', kind: 'reject_once' },
  ],
};
