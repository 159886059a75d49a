import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import {
  Prompts,
  TEMPLATE_NAMES,
  shippedTemplatesDir,
  templateFile,
  templateVars,
} from '../../src/job/prompts.js';
import { tempDir } from '../helpers/tmp.js';

const todo = {
  id: 'abcd1234',
  title: 'Add a --verbose flag',
  description: 'Print each step.',
  type: 'feature' as const,
  priority: 1,
};

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir()));
afterEach(() => tmp.cleanup());

describe('prompt templates', () => {
  it('every shipped template renders with the documented variables', async () => {
    const p = new Prompts(tmp.path).loadAll();
    for (const name of TEMPLATE_NAMES) {
      const out = await p.render(
        name,
        templateVars(todo, {
          Feedback: 'FB-TEXT',
          WorkspacePath: '/ws/x',
          Message: 'feat: x',
          BaseRev: 'b0',
        }),
      );
      expect(out.length).toBeGreaterThan(5);
      if (name !== 'commit') expect(out).toContain('Add a --verbose flag');
    }
  });

  it('implement shows the feedback only when there is some', async () => {
    const p = new Prompts(tmp.path);
    const withFb = await p.render('implement', templateVars(todo, { Feedback: '| `npm test` | 1 |' }));
    expect(withFb).toContain('| `npm test` | 1 |');
    expect(withFb).toContain('Feedback on the previous attempt');
    const without = await p.render('implement', templateVars(todo, {}));
    expect(without).not.toContain('Feedback on the previous attempt');
  });

  it('the review prompt says exactly how to write .incrementum-feedback', async () => {
    const out = await new Prompts(tmp.path).render('review', templateVars(todo, { WorkspacePath: '/ws' }));
    expect(out).toContain('/ws/.incrementum-feedback');
    expect(out).toMatch(/line 1: exactly one word, one of `ACCEPT`, `REQUEST_CHANGES` or `ABANDON`/);
    expect(out).toMatch(/line 2: empty/);
  });

  it('no template tells the agent to commit before completing or to revert', () => {
    for (const name of TEMPLATE_NAMES) {
      const text = readFileSync(join(shippedTemplatesDir(), `${name}.liquid`), 'utf8');
      expect(text).not.toMatch(/commit (your|the) (work|changes) before/i);
      expect(text).not.toMatch(/\brevert/i);
      expect(text).not.toMatch(/git (reset|checkout --|restore)/i);
    }
  });

  it('the commit template joins the message and the todo id', async () => {
    const out = await new Prompts(tmp.path).render(
      'commit',
      templateVars(todo, { Message: 'feat: verbose' }),
    );
    expect(out).toBe('feat: verbose\n\nTodo: abcd1234\n');
  });

  it('a file in .incrementum/templates overrides the shipped one', async () => {
    mkdirSync(join(tmp.path, '.incrementum', 'templates'), { recursive: true });
    writeFileSync(join(tmp.path, '.incrementum', 'templates', 'implement.liquid'), 'DO {{ Todo.Title }}');
    expect(templateFile('implement', tmp.path).override).toBe(true);
    expect(templateFile('review', tmp.path).override).toBe(false);
    expect(await new Prompts(tmp.path).render('implement', templateVars(todo))).toBe(
      'DO Add a --verbose flag',
    );
  });

  it('a template edited after a load is read as it is now: by the next job, and by the same check again', async () => {
    const dir = join(tmp.path, '.incrementum', 'templates');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'implement.liquid');
    writeFileSync(file, 'ONE {{ Todo.Title }}');
    new Prompts(tmp.path).loadAll();
    expect(await new Prompts(tmp.path).render('implement', templateVars(todo))).toBe(
      'ONE Add a --verbose flag',
    );
    writeFileSync(file, 'TWO {{ Todo.Title }}');
    expect(await new Prompts(tmp.path).render('implement', templateVars(todo))).toBe(
      'TWO Add a --verbose flag',
    );
    // Broken after a good load: the check says so, it does not pass on what it read before.
    writeFileSync(file, 'THREE {{ Todo.Nope }}');
    expect(() => new Prompts(tmp.path).loadAll()).toThrow(
      /implement\.liquid, line 1: unknown variable Todo\.Nope/,
    );
  });

  it('parse and render errors name the file and the line', async () => {
    const dir = join(tmp.path, '.incrementum', 'templates');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'review.liquid'), 'ok\nfine\n{% if Feedback %}never closed\n');
    writeFileSync(join(dir, 'implement.liquid'), 'line one\n{{ Todo.Nope | upcase }}\n');
    const p = new Prompts(tmp.path);
    const parse = await p.render('review', templateVars(todo)).catch((e: unknown) => e);
    expect(parse).toBeInstanceOf(UserError);
    expect((parse as Error).message).toContain(join(dir, 'review.liquid'));
    expect((parse as Error).message).toMatch(/line 3/);
    expect(() => new Prompts(tmp.path).loadAll()).toThrow(/review\.liquid, line 3/);
    const render = await p.render('implement', templateVars(todo)).catch((e: unknown) => e);
    expect(render).toBeInstanceOf(UserError);
    expect((render as Error).message).toMatch(/implement\.liquid, line 2: unknown variable Todo\.Nope\n/);
  });

  it('a variable that does not exist is an error naming file and line, even on a path no render takes', () => {
    const dir = join(tmp.path, '.incrementum', 'templates');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'project-review.liquid');
    writeFileSync(
      file,
      '# {{ Todo.Title }}\n{% if Feedback != blank %}\n{{ Todo.Titel }}\n{% endif %}\n{{ Nope }}\n',
    );
    const err = (() => {
      try {
        new Prompts(tmp.path).loadAll();
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(UserError);
    expect(err?.message).toContain(`prompt template ${file}, line 3: unknown variable Todo.Titel\n`);
    expect(err?.message).toContain(`prompt template ${file}, line 5: unknown variable Nope\n`);
    expect(err?.message).toMatch(/The variables are Todo\.ID, .*BaselineFailures/);
  });

  it('resolve-conflicts shows the branch and both sides, and an override is checked like the others', async () => {
    const out = await new Prompts(tmp.path).render(
      'resolve-conflicts',
      templateVars(todo, { Onto: 'trunk', Conflicts: '## a.txt\n```diff\n+x\n```', WorkspacePath: '/ws' }),
    );
    expect(out.startsWith('You are resolving conflicts')).toBe(true);
    expect(out).toContain('the branch trunk changed');
    expect(out).toContain('## a.txt');
    const dir = join(tmp.path, '.incrementum', 'templates');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'resolve-conflicts.liquid'), '{{ Conflicts }} {{ Onto }} {{ Conflict }}\n');
    expect(() => new Prompts(tmp.path).loadAll()).toThrow(
      /resolve-conflicts\.liquid, line 1: unknown variable Conflict\n/,
    );
  });

  it('locals, loop variables and filters of known variables are not unknown', () => {
    const dir = join(tmp.path, '.incrementum', 'templates');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'implement.liquid'),
      '{% assign t = Todo.Title | upcase %}{{ t }} {{ Todo.Title.size }}\n' +
        '{% for w in Feedback | split: " " %}{{ forloop.index }} {{ w }}{% endfor %}\n',
    );
    expect(() => new Prompts(tmp.path).loadAll()).not.toThrow();
  });
});
