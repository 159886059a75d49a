// ii todo edit | close | reopen and list --ready: the backlog from the command line.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ii } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  tmp = tempDir();
  mkdirSync(join(tmp.path, 'repo'));
  repo = gitRepo(join(tmp.path, 'repo'));
  env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: tmp.path, NO_COLOR: '1' };
});
afterEach(() => tmp.cleanup());
const run = (args: string[]) => ii(args, { cwd: repo, env });
const create = (...args: string[]) => {
  const r = run(['todo', 'create', ...args]);
  expect(r.stderr).toBe('');
  return r.stdout.trim();
};

describe('the backlog on the command line', () => {
  it('list --ready in run order; blocked ones marked with what blocks them', () => {
    const a = create('--title', 'Schema', '--priority', '3');
    const b = create('--title', 'API', '--deps', a.slice(0, 5), '--priority', '0');
    const c = create('--title', 'Docs', '--priority', '1');
    const ready = run(['todo', 'list', '--ready', '--json']);
    expect((JSON.parse(ready.stdout) as { id: string }[]).map((t) => t.id)).toEqual([c, a]);
    const list = run(['todo', 'list']);
    expect(list.stdout).toMatch(new RegExp(`${b}\\s+P0\\s+task\\s+blocked\\s+.*API`));
    expect(list.stdout).toContain(`blocked:\n  ${b}  waits for ${a} "Schema" (open)`);
    expect(run(['todo', 'show', b]).stdout).toContain(`blocked:  waits for ${a} "Schema" (open)`);

    expect(run(['todo', 'close', a]).stdout).toContain(`todo ${a} closed`);
    expect(run(['todo', 'list']).stdout).toContain(`waits for ${a} "Schema" (closed)`);
    // a has no deps: nothing to wait for, so the line does not say it waits.
    expect(run(['todo', 'reopen', a]).stdout).toBe(`todo ${a} is open; ii run takes it in its turn.\n`);
    run(['todo', 'close', b]);
    expect(run(['todo', 'reopen', b]).stdout).toContain(
      `todo ${b} is open; ii run takes it once its deps are done`,
    );
    expect(JSON.parse(run(['todo', 'list', '--ready', '--json']).stdout)).toHaveLength(2);
  });

  it('edit changes the fields given; --deps refuses an unknown id and a cycle, naming it', () => {
    const a = create('--title', 'A');
    const b = create('--title', 'B', '--deps', a);
    const e = run([
      'todo',
      'edit',
      a.slice(0, 6),
      '--title',
      'A2',
      '--priority',
      '0',
      '--type',
      'bug',
      '--json',
    ]);
    expect(e.code).toBe(0);
    expect(JSON.parse(e.stdout)).toMatchObject({ id: a, title: 'A2', priority: 0, type: 'bug', deps: [] });
    const cyc = run(['todo', 'edit', a, '--deps', b]);
    expect(cyc.code).toBe(2);
    expect(cyc.stderr).toContain(`that would make a cycle, ${a} → ${b} → ${a}`);
    const unknown = run(['todo', 'edit', b, '--deps', 'zzzz']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/dep "zzzz": no todo matches "zzzz"/);
    expect(JSON.parse(run(['todo', 'show', b, '--json']).stdout).deps).toEqual([a]);
    expect(JSON.parse(run(['todo', 'edit', b, '--deps', '', '--json']).stdout).deps).toEqual([]);
  });

  it('todo add is todo create; list --status refuses a status that does not exist', () => {
    const a = run(['todo', 'add', '--title', 'Added']);
    expect(a.code, a.stderr).toBe(0);
    expect(run(['todo', 'show', a.stdout.trim()]).stdout).toContain('Added');
    const bogus = run(['todo', 'list', '--status', 'bogus']);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('--status is one of open, in_progress, done, closed');
    expect(bogus.stdout).toBe('');
    expect(run(['todo', 'list', '--status', 'OPEN']).stdout).toContain('Added');
  });

  it('--help names the new verbs', () => {
    const h = run(['todo', '--help']).stdout;
    for (const verb of ['edit', 'close', 'reopen']) expect(h).toMatch(new RegExp(`\\n\\s+${verb}\\b`));
    expect(run(['todo', 'list', '--help']).stdout).toContain('--ready');
  });
});
