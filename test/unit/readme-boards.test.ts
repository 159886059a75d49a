// The README names each board's columns; the boards are built from the
// column lists in src/model/derive.ts. Either changing alone fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CHANGE_COLUMNS, COMMIT_COLUMNS, JOB_COLUMNS } from '../../src/model/derive.js';

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8').replace(/\s+/g, ' ');

/** The column names the README lists after `lead`, up to the first `)` or `.`. */
function listed(lead: string): string[] {
  const at = readme.indexOf(lead);
  expect(at, `the README has no "${lead}"`).toBeGreaterThanOrEqual(0);
  const list = readme.slice(at + lead.length).split(/[).;]/)[0]!;
  return list
    .replace(/\bthen\b/g, '')
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);
}

it("the README's board columns are the boards' columns, Failed included", () => {
  expect(listed('- **Jobs**:')).toEqual([...JOB_COLUMNS]);
  expect(listed('its **changes** (')).toEqual([...CHANGE_COLUMNS]);
  expect(listed('its **iterations** (')).toEqual([...COMMIT_COLUMNS]);
});
