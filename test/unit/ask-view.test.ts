// How ii job list / show print a waiting job: the question in full, and the
// agent's text (title, command, paths, diff, option names) escaped and redacted.
import { describe, expect, it } from 'vitest';
import { askHistoryLines, askQuestionLines } from '../../src/cli/job/ask-view.js';
import { jobListTable } from '../../src/cli/job/view.js';
import { style } from '../../src/cli/format.js';
import { Job, PermissionAsk } from '../../src/model/index.js';

const plain = style(false);
const noControl = (s: string) => !s.includes('\u001b') && !s.includes('\u0007');
const T = '2026-11-25T10:00:00.000Z';
const SECRET = 'sk-ant-api03-' + 'a'.repeat(40);
const hostile = `npm test \u001b[2J\u001b]0;pwned\u0007 ${SECRET}`;

const ask = PermissionAsk.parse({
  id: 7,
  job_id: 'j1',
  tool_kind: 'execute',
  title: `Run \u001b[31m${hostile}`,
  command: hostile,
  paths: ['a\u001b[1m.ts'],
  diff_preview: `a.ts:\n-x\n+\u001b[5my`,
  options: [{ id: 'a', name: 'Allow \u001b[7monce', kind: 'allow_once' }],
  asked_at: T,
});
const job = Job.parse({
  id: 'j1abcdef',
  repo: 'r',
  todo_id: 't1',
  started_at: T,
  updated_at: T,
  asking: ask,
});

describe('a waiting job, shown', () => {
  it('shows the question in full, escaped and redacted, with how to answer it', () => {
    const text = askQuestionLines(job, plain, Date.parse(T) + 240_000).join('\n');
    expect(text).toContain('waiting:');
    expect(text).toContain('(4 min)');
    expect(text).toContain('ii job answer j1abcdef allow|allow-always|reject');
    expect(text).toContain('diff:');
    expect(noControl(text)).toBe(true);
    expect(text).not.toContain(SECRET);
  });

  it('ii job list says waiting; a closed request is a history line', () => {
    const table = jobListTable(
      [{ ...job, heartbeat_at: new Date().toISOString(), pid: process.pid, host: null }],
      new Map(),
      plain,
    );
    expect(table).toContain('waiting');
    const closed = { ...ask, outcome: 'reject' as const, waited_ms: 65_000, note: `no \u001b[31m ${SECRET}` };
    const lines = askHistoryLines({ ...job, asking: null, waited_ms: 65_000 }, [closed]).join('\n');
    expect(lines).toMatch(/waited: +1 min for a person over 1 request/);
    expect(lines).toMatch(/reject +after 1 min/);
    expect(noControl(lines)).toBe(true);
    expect(lines).not.toContain(SECRET);
  });
});
