// A malformed incrementum.toml: the commands that only read the todos, jobs
// and workspaces warn once on stderr (what is wrong, where, how to fix it) and
// carry on with the defaults; those that act on the config still stop on it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom } from '../helpers/job.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-broken-config-');
  f.setup();
});
afterEach(() => f.cleanup());

const count = (text: string, what: string) => text.split(what).length - 1;

describe('a malformed incrementum.toml', () => {
  it('read-only commands warn once and carry on; job do, run and doctor stop on it', () => {
    const done = f.run(['job', 'do', '--title', 'say hello']);
    expect(done.code, done.stderr).toBe(0);
    const job = jobIdFrom(done.stderr);
    expect(job).not.toBe('');
    const todo = (f.todos('done')[0] as { id: string }).id;
    // A missing bracket, as a person editing by hand leaves it.
    writeFileSync(join(f.repo, 'incrementum.toml'), '[job\ntest-commands = ["true"]\n');

    const readers: [string[], string][] = [
      [['todo', 'list'], 'say hello'],
      [['todo', 'list', '--ready'], 'No todo is ready'],
      [['todo', 'show', todo], 'say hello'],
      [['job', 'list', '--all'], job.slice(0, 6)],
      [['job', 'show', job], job],
      [['job', 'logs', job], 'say hello'],
      [['workspace', 'list'], 'repo'],
    ];
    for (const [args, shows] of readers) {
      const r = f.run(args);
      expect(r.code, `ii ${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout, `ii ${args.join(' ')}`).toContain(shows);
      // Warned about at most once, and when warned: what, where, what to do.
      expect(count(r.stderr, 'is not valid TOML'), `ii ${args.join(' ')}`).toBeLessThanOrEqual(1);
      if (r.stderr) {
        expect(r.stderr).toContain(
          `ii: warning: config ${join(f.repo, 'incrementum.toml')} is not valid TOML`,
        );
        expect(r.stderr).toContain('Fix the file at the place shown');
        expect(r.stderr).toContain('goes on with the default settings');
      }
    }
    expect(f.run(['todo', 'list']).stderr).toContain('ii todo list goes on with the default settings');

    for (const args of [['job', 'do', '--title', 'another'], ['run']]) {
      const r = f.run(args);
      expect(r.code, `ii ${args.join(' ')}`).toBe(2);
      expect(r.stderr, `ii ${args.join(' ')}`).toContain('is not valid TOML');
      expect(r.stderr).not.toContain('goes on with the default settings');
    }
    const doc = f.run(['doctor']);
    expect(doc.code).toBe(1);
    expect(doc.stdout).toMatch(/FAIL config\s+config .*is not valid TOML/);
  });

  it('a broken user config that only mentions a url (a comment) is warned about as before; one that may set [state] url stops every command', () => {
    const done = f.run(['todo', 'create', '--title', 'say hello']);
    expect(done.code, done.stderr).toBe(0);
    const dir = join(f.env.XDG_CONFIG_HOME!, 'incrementum');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'config.toml');
    writeFileSync(file, '# our wiki: see the url in the README\n[agent\n');
    const r = f.run(['todo', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('say hello');
    expect(r.stderr).toContain('goes on with the default settings');
    // The store itself may be named in it: not guessed past (SQLite would be a second record).
    writeFileSync(file, '[state\nurl = "postgres://ii@db/incrementum"\n');
    const refused = f.run(['todo', 'list']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`config ${file} is not valid TOML`);
  });
});
