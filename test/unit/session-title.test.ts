// job-subcommand spec, Commands > `ii job do`, step 4: the agent session's
// title (its topic) includes the job id.
import { describe, expect, it } from 'vitest';
import { agentSessionTitle, SESSION_TITLE_MAX } from '../../src/job/session-title.js';

describe('agentSessionTitle', () => {
  it('names the job, the purpose and the todo', () => {
    expect(agentSessionTitle('1a2b3c4d', 'review', 'Add a --verbose flag')).toBe(
      'ii job 1a2b3c4d review: Add a --verbose flag',
    );
  });

  it('is one line without control characters, whatever the todo title holds', () => {
    expect(agentSessionTitle('j1', 'implement', 'two\nlines\r\n\x1b[31mred\x07  ')).toBe(
      'ii job j1 implement: two lines [31mred',
    );
  });

  it('cuts a long todo title, never the job id, on a character boundary', () => {
    const t = agentSessionTitle('1a2b3c4d', 'commit-message', '日本'.repeat(200));
    expect(t.startsWith('ii job 1a2b3c4d commit-message: 日本')).toBe(true);
    expect([...t]).toHaveLength(SESSION_TITLE_MAX);
    expect(t.endsWith('…')).toBe(true);
    expect(t).not.toContain('\uFFFD');
  });
});
