// A todo a real job finished without changing anything reads "done · no
// changes" in ii todo list and ii todo show, so a person sees nothing was
// made; one whose job committed reads "done". Real ii job do runs on the
// scripted agent: with no scenario its implement turn changes nothing.
import { afterEach, expect, it } from 'vitest';
import { JobFixture, write } from '../helpers/job.js';

let f: JobFixture;
afterEach(() => f.cleanup());

it('ii todo list and show say done · no changes for a todo whose job made no commit', () => {
  f = new JobFixture('ii-no-changes-');
  f.setup();
  const nothing = f.run(['todo', 'create', '--title', 'Nothing to do here']).stdout.trim();
  const something = f.run(['todo', 'create', '--title', 'Write the notes']).stdout.trim();
  expect(f.run(['job', 'do', nothing]).code).toBe(0);
  const s = f.scenario('notes', { implement: [{ actions: [write('NOTES.md', 'notes\n')] }] });
  expect(f.run(['job', 'do', something], s).code).toBe(0);

  const list = f.run(['todo', 'list']).stdout;
  const row = (id: string) => list.split('\n').find((l) => l.startsWith(id)) ?? '';
  expect(row(nothing)).toContain('done · no changes');
  expect(row(something)).toContain('done');
  expect(row(something)).not.toContain('no changes');
  expect(f.run(['todo', 'show', nothing]).stdout).toContain('status:   done · no changes');
  expect(f.run(['todo', 'show', something]).stdout).toMatch(/status: {3}done\n/);
  // --json keeps the model's own status.
  const json = JSON.parse(f.run(['todo', 'show', nothing, '--json']).stdout) as { status: string };
  expect(json.status).toBe('done');
});
