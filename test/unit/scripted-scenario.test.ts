// The scripted agent's scenario format and prompt detection, against the
// shipped templates rendered for real.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario, nextTurn, promptKind } from '../../src/agent/scripted/scenario.js';
import { autoCommitPrompt, iterationSummary, SUMMARY_MAX } from '../../src/agent/auto-commit.js';
import { Prompts, templateVars } from '../../src/job/prompts.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir('ii-scenario-');
afterAll(tmp.cleanup);
const todo = {
  id: 'abc123',
  title: 'Add a greeting',
  description: 'You are reviewing nothing here.',
  type: 'task',
  priority: 2,
} as const;

describe('scripted agent scenarios', () => {
  it('recognises each of our prompts', async () => {
    const prompts = new Prompts(tmp.path).loadAll();
    const vars = templateVars(todo, {
      WorkspacePath: '/ws',
      BaseRev: 'deadbeef',
      Feedback: 'You are doing the final review wrong',
    });
    expect(promptKind(await prompts.render('implement', vars))).toBe('implement');
    expect(promptKind(await prompts.render('review', vars))).toBe('review');
    expect(promptKind(await prompts.render('project-review', vars))).toBe('project-review');
    expect(promptKind(await prompts.render('commit-message', vars))).toBe('commit-message');
    const files = [
      { path: 'a.ts', abs_path: '/ws/a.ts', is_new: true, is_deleted: false, additions: 3, deletions: 0 },
    ];
    expect(promptKind(autoCommitPrompt({ todo, files, summary: '' }))).toBe('auto-commit');
    expect(promptKind('hello')).toBe('other');
  });

  it('parses the example scenarios', () => {
    const dir = join(ROOT, 'test', 'fixtures', 'scenarios');
    const names = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(names.length).toBeGreaterThan(0);
    for (const f of names) expect(() => loadScenario(join(dir, f)), f).not.toThrow();
  });

  it('rejects a scenario with an unknown action or kind', () => {
    const bad = join(tmp.path, 'bad.json');
    writeFileSync(bad, JSON.stringify({ implement: [{ actions: [{ type: 'explode' }] }] }));
    expect(() => loadScenario(bad)).toThrow();
    writeFileSync(bad, JSON.stringify({ implemnt: [] }));
    expect(() => loadScenario(bad)).toThrow();
  });

  it('keeps its place per kind in the state file, then runs out', () => {
    const path = join(tmp.path, 's.json');
    writeFileSync(
      path,
      JSON.stringify({
        implement: [
          { actions: [{ type: 'message', text: '1' }] },
          { actions: [{ type: 'message', text: '2' }] },
        ],
        review: [{}],
      }),
    );
    const sc = loadScenario(path);
    const state = `${path}.state`;
    const texts = [1, 2, 3].map(() => nextTurn(sc, 'implement', state)?.actions[0]);
    expect(texts).toEqual([{ type: 'message', text: '1' }, { type: 'message', text: '2' }, undefined]);
    expect(nextTurn(sc, 'review', state)).toEqual({ actions: [], stop_reason: 'end_turn' });
    expect(nextTurn(sc, 'review', state)).toBeNull();
  });
});

describe('the auto-commit prompt', () => {
  const todo = { id: 't1', title: 'Greet', description: '' };
  it('has the summary of the iteration, or says there is none', () => {
    expect(autoCommitPrompt({ todo, files: [], summary: 'Added a greeting.' })).toContain(
      '# Summary of this iteration\n\nAdded a greeting.\n',
    );
    expect(autoCommitPrompt({ todo, files: [] })).toContain('(you gave no summary');
  });
  it('keeps the end of a long summary, where an agent says what it did', () => {
    const long = 'word '.repeat(2000) + 'In short: added the greeting.';
    const s = iterationSummary(long);
    expect(s.length).toBeLessThanOrEqual(SUMMARY_MAX + 1);
    expect(s.startsWith('…')).toBe(true);
    expect(s.endsWith('In short: added the greeting.')).toBe(true);
  });
});
