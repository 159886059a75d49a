// job-subcommand spec, Job Model (`opencode_sessions`) and
// job-change-tracking spec, JobCommit and JobReview (`opencode_session_id`):
// we name these keys after the agent, not opencode, and the README's JSON
// section says so, with the spec's names beside ours. The names it gives as
// ours must be the model's keys.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Job, JobCommit, JobReview } from '../../src/model/job.js';

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

it("the README's JSON section puts the spec's opencode_* names beside our agent_* keys", () => {
  const section = readme.split('### JSON keys that differ from the specs')[1]?.split('\n## ')[0] ?? '';
  expect(section, 'the README has no "JSON keys that differ from the specs" section').not.toBe('');
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  const row = (ours: string) => rows.find((r) => r.startsWith(`| \`${ours}\``)) ?? '';
  expect(row('agent_sessions')).toContain('`opencode_sessions`');
  expect(row('agent_session_id')).toContain('`opencode_session_id`');
  expect(Object.keys(Job.shape)).toContain('agent_sessions');
  expect(Object.keys(JobCommit.shape)).toContain('agent_session_id');
  expect(Object.keys(JobReview.shape)).toContain('agent_session_id');
  expect(Object.keys(Job.shape)).not.toContain('opencode_sessions');
});
