// The Needs you inbox goes through waiting jobs longest-waiting first; two
// requests stored in the same millisecond go in the order they were stored,
// not by job id (random): the inbox test failed in CI when they tied.
import { expect, it } from 'vitest';
import { waitingJobs } from '../../src/dashboard/view/needs-you.js';
import { PermissionAsk } from '../../src/model/permission-ask.js';

const at = '2026-11-26T10:46:33.282Z';
const job = (id: string, askId: number, asked_at = at) => ({
  id,
  status: 'active' as const,
  asking: PermissionAsk.parse({ id: askId, job_id: id, asked_at }),
});

it('orders by when asked, then by the order stored', () => {
  const jobs = [job('aaaa', 2), job('ffff', 1), job('0000', 3, '2026-11-26T10:46:33.281Z')];
  expect(waitingJobs(jobs).map((j) => j.id)).toEqual(['0000', 'ffff', 'aaaa']);
});
