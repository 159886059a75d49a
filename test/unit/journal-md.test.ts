import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildJournal } from '../../src/journal/build.js';
import { humanDuration, renderJournalMd } from '../../src/journal/render-md.js';
import { fixtureInputs, fixtureJob } from '../helpers/journal-fixture.js';

const GOLDEN = join(import.meta.dirname, '..', 'fixtures', 'journal', 'journal.golden.md');

describe('journal.md', () => {
  it('matches the golden file (UPDATE_GOLDEN=1 rewrites it after a deliberate change)', () => {
    const md = renderJournalMd(buildJournal(fixtureInputs()));
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, md);
    expect(md).toBe(readFileSync(GOLDEN, 'utf8'));
  });

  it('journal-v2, Fixes Applied 4: Warnings right after Notes, "*No warnings*" when there are none', () => {
    const md = renderJournalMd(buildJournal(fixtureInputs()));
    expect(md).toMatch(/## Notes\n[\s\S]*?\n## Warnings\n\n\*No warnings\*\n\n## Sources/);
  });

  it("journal-v2, Fixes Applied 4: listed warnings follow the spec's lead-in line; null sections are N/A", () => {
    const md = renderJournalMd(
      buildJournal(
        fixtureInputs({
          git: { unavailable: 'no repository to ask' },
          job: fixtureJob({ status: 'failed' }),
        }),
      ),
    );
    expect(md).toContain('## Checkpoints\n\nN/A\n');
    expect(md).toContain('## Changes\n\nN/A\n');
    expect(md).toContain(
      '## Warnings\n\n⚠️ The following issues were encountered while generating this journal:\n\n' +
        '- no checkpoints: no repository to ask\n- no change summary: no repository to ask\n',
    );
  });

  it('a fence longer than any backtick run in the excerpt, so output cannot break the page', () => {
    const inputs = fixtureInputs();
    inputs.events = {
      state: 'ok',
      value: [
        { ts: 'x', type: 'test_start', command: 'npm test' },
        { ts: 'x', type: 'test_output', command: 'npm test', stream: 'stdout', text: 'a ```` b\n' },
        { ts: 'x', type: 'test_end', command: 'npm test', exit_code: 1, duration_ms: 1, tail: '' },
      ],
    };
    const md = renderJournalMd(buildJournal(inputs));
    expect(md).toContain('`````text\na ```` b\n`````');
  });

  it('human durations', () => {
    expect(humanDuration(null)).toBe('N/A');
    expect(humanDuration(4.25)).toBe('4.3s');
    expect(humanDuration(750)).toBe('12m 30s');
    expect(humanDuration(3600)).toBe('1h');
  });
});
