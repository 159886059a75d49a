// ii state migrate through the real CLI against the run's private PostgreSQL:
// a clone's local state goes into an empty shared store renamed for what all
// its clones share (its remote), a second copy into a store that is not empty
// is refused, the URL's password is never shown, the source stays as it was,
// and the way back into SQLite names the repository by the clone it runs in.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedIdentity } from '../../src/state/identity.js';
import { repoSlug } from '../../src/state/paths.js';
import { ii } from '../helpers/cli.js';
import { dropDatabase, freshDatabase, passwordUrl, pgServer, pgWhyNot, socketUrl } from '../helpers/pg.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const server = pgServer();

describe.skipIf(!server)(`ii state migrate${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeAll(async () => {
    tmp = tempDir('ii-migrate-');
    db = await freshDatabase(server!);
  });
  afterAll(async () => {
    await dropDatabase(server!, db);
    tmp.cleanup();
  });

  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const envFor = (state: string): NodeJS.ProcessEnv => ({
    HOME: tmp.path,
    XDG_CONFIG_HOME: join(tmp.path, 'config'),
    XDG_STATE_HOME: join(tmp.path, state),
    II_DATABASE_URL: '',
  });

  it('copies a clone into PostgreSQL under its remote, refuses a second copy, and comes back under another clone', async () => {
    // A shared remote and two clones of it.
    const origin = join(tmp.path, 'origin.git');
    const seed = join(tmp.path, 'seed');
    mkdirSync(seed);
    gitRepo(seed);
    git(tmp.path, 'clone', '-q', '--bare', seed, origin);
    git(tmp.path, 'clone', '-q', origin, join(tmp.path, 'a'));
    git(tmp.path, 'clone', '-q', origin, join(tmp.path, 'b'));
    const [a, b] = [join(tmp.path, 'a'), join(tmp.path, 'b')];

    const made = ii(['todo', 'create', '--title', 'Shared at last'], { cwd: a, env: envFor('state-a') });
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout.trim();

    const url = passwordUrl(server!, db);
    const there = ii(['state', 'migrate', '--to', url], { cwd: a, env: envFor('state-a') });
    expect(there.code, there.stderr).toBe(0);
    const shown = there.stdout + there.stderr;
    expect(shown).not.toContain(server!.password);
    expect(shown).toContain(':[REDACTED]@127.0.0.1');
    expect(shown).toMatch(/^ {2}todos +1$/m);
    const shared = sharedIdentity(a).slug;
    expect(sharedIdentity(b).slug).toBe(shared);
    expect(shown).toContain(`${repoSlug(a)} → ${shared}`);
    expect(shown).toContain('The source was not changed.');

    // In the shared store, under the name every clone computes.
    const c = new pg.Client({ connectionString: socketUrl(server!, db) });
    await c.connect();
    try {
      const rows = (await c.query('SELECT id, repo FROM todos')).rows as { id: string; repo: string }[];
      expect(rows).toEqual([{ id, repo: shared }]);
    } finally {
      await c.end();
    }

    // The source is as it was: clone a still lists its todo on SQLite.
    const still = ii(['todo', 'list', '--json'], { cwd: a, env: envFor('state-a') });
    expect(still.code, still.stderr).toBe(0);
    expect((JSON.parse(still.stdout) as { id: string }[]).map((t) => t.id)).toEqual([id]);

    // A second copy into a store that holds todos: refused, nothing changed.
    const again = ii(['state', 'migrate', '--to', url], { cwd: a, env: envFor('state-a') });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already holds todos or jobs');
    expect(again.stderr).not.toContain(server!.password);

    // Back into a fresh SQLite store from clone b (the configured URL): b's own name there.
    const back = ii(['state', 'migrate', '--to', 'sqlite'], {
      cwd: b,
      env: { ...envFor('state-b'), II_DATABASE_URL: url },
    });
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain(`${shared} → ${repoSlug(b)}`);
    expect(back.stdout).not.toContain(server!.password);
    const inB = ii(['todo', 'list', '--json'], { cwd: b, env: envFor('state-b') });
    expect(inB.code, inB.stderr).toBe(0);
    expect((JSON.parse(inB.stdout) as { id: string }[]).map((t) => t.id)).toEqual([id]);

    // Into a local store that holds todos: refused, and it keeps its own.
    const full = ii(['state', 'migrate', '--to', 'sqlite', '--from', url], {
      cwd: a,
      env: envFor('state-a'),
    });
    expect(full.code).toBe(2);
    expect(full.stderr).toContain('already holds todos or jobs');
    expect(existsSync(join(tmp.path, 'state-a', 'incrementum', 'state.db'))).toBe(true);
  });

  it('says what is wrong with a target that is not a store', () => {
    const r = ii(['state', 'migrate', '--to', 'mysql://u:pw@h/x'], { cwd: tmp.path, env: envFor('state-x') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--to must be postgres://');
    expect(r.stderr).not.toContain(':pw@');
    const none = ii(['state', 'migrate', '--to', 'postgres'], { cwd: tmp.path, env: envFor('state-x') });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('none is: set II_DATABASE_URL');
  });
});
