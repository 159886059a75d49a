import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import type { JobDeps } from '../../src/job/launch.js';
import { finishSession, startSession } from '../../src/session/index.js';
import { pruneWorkspaces } from '../../src/session/workspaces.js';
import { openStateStore, repoSlug, type StateStore } from '../../src/state/index.js';
import { GitVcs } from '../../src/vcs/git.js';
import { ii, ROOT } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

// The session functions are exactly what the job launcher expects.
const vcs = new GitVcs();
const deps: Pick<JobDeps, 'startSession' | 'finishSession'> = {
  startSession: (store, o) => startSession(store, o, vcs),
  finishSession: (store, id, outcome) => finishSession(store, id, outcome, vcs),
};

const STARTER = join(ROOT, 'test', 'fixtures', 'session-starter.mjs');
let tmp: ReturnType<typeof tempDir>;
let repo: string;
let slug: string;
let store: StateStore;
beforeEach(() => {
  tmp = tempDir();
  const dir = join(tmp.path, 'repo');
  mkdirSync(dir);
  gitRepo(dir, { 'README.md': '# test\n', 'a.txt': 'a\n', 'b.txt': 'b\n', '.gitignore': '.env\nbuild/\n' });
  repo = git(dir, 'rev-parse', '--show-toplevel');
  slug = repoSlug(repo);
  store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
  }).trim();
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

const start = (todoId: string, extra: { rev?: string; copy?: string[]; repoRoot?: string } = {}) =>
  deps.startSession(asyncStore(store), { repoRoot: repo, slug, todoId, stateDir: store.dir, ...extra });

/** Every file of the user's checkout outside .git, with its bytes' hash, plus what git says of it. */
function checkoutSnapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (name === '.git' && d === dir) continue;
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  out['<status>'] = git(dir, 'status', '--porcelain=v1', '--ignored', '--untracked-files=all');
  out['<staged>'] = git(dir, 'diff', '--cached');
  out['<unstaged>'] = git(dir, 'diff');
  out['<head>'] = git(dir, 'symbolic-ref', 'HEAD') + ' ' + git(dir, 'rev-parse', 'HEAD');
  return out;
}

function starter(todoId: string) {
  const child = spawn(process.execPath, [STARTER, repo, todoId], {
    env: { ...process.env, XDG_STATE_HOME: join(tmp.path, 'state') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, out, err })),
  );
}

describe('workspaces and sessions', () => {
  it('8 processes starting sessions at once get 8 distinct workspaces, then reuse them', async () => {
    const todos = Array.from({ length: 16 }, (_, i) => store.todos.create(slug, { title: `todo ${i}` }));
    const round = async (ids: string[]) => {
      const results = await Promise.all(ids.map((id) => starter(id)));
      results.forEach((r) => expect(r.code, r.err).toBe(0));
      return results.map((r) => JSON.parse(r.out) as { session: string; path: string; branch: string });
    };
    const first = await round(todos.slice(0, 8).map((t) => t.id));
    const paths = new Set(first.map((s) => s.path));
    expect(paths.size).toBe(8);
    expect(new Set(first.map((s) => s.branch)).size).toBe(8);
    const base = git(repo, 'rev-parse', 'main');
    const worktrees = git(repo, 'worktree', 'list', '--porcelain');
    for (const s of first) {
      expect(worktrees).toContain(`worktree ${s.path}\n`);
      expect(git(s.path, 'rev-parse', 'HEAD')).toBe(base);
      expect(git(s.path, 'symbolic-ref', '--short', 'HEAD')).toBe(s.branch);
    }
    for (const t of todos.slice(0, 8)) expect(store.todos.get(slug, t.id)?.status).toBe('in_progress');

    for (const s of first) await deps.finishSession(asyncStore(store), s.session, 'done');
    expect(store.workspaces.list(slug).every((w) => w.status === 'free')).toBe(true);
    const second = await round(todos.slice(8).map((t) => t.id));
    expect(new Set(second.map((s) => s.path))).toEqual(paths);
    expect(store.workspaces.list(slug)).toHaveLength(8);
  });

  it("leaves the user's checkout byte-identical through a workspace's whole life", async () => {
    // Uncommitted, staged, untracked and ignored work in the user's checkout.
    writeFileSync(join(repo, 'a.txt'), 'a, edited but not staged\n');
    writeFileSync(join(repo, 'b.txt'), 'b, staged\n');
    git(repo, 'add', 'b.txt');
    writeFileSync(join(repo, 'notes.txt'), 'untracked notes\n');
    writeFileSync(join(repo, '.env'), 'SECRET=1\n');
    mkdirSync(join(repo, 'build'));
    writeFileSync(join(repo, 'build', 'out.js'), 'built\n');
    const before = checkoutSnapshot(repo);

    const todo = store.todos.create(slug, { title: 'do it' });
    const s1 = await start(todo.id, { copy: ['.env', 'missing.env'] });
    const ws = s1.workspacePath;
    expect(ws.startsWith(join(store.dir, 'workspaces', slug))).toBe(true);
    expect(readFileSync(join(ws, '.env'), 'utf8')).toBe('SECRET=1\n');
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a\n');
    expect(existsSync(join(ws, 'notes.txt'))).toBe(false);
    expect(store.todos.get(slug, todo.id)?.status).toBe('in_progress');
    expect(s1.session).toMatchObject({ todo_id: todo.id, workspace_path: ws, status: 'active' });

    // An agent's work: two iterations and a describe, protocol files around.
    await vcs.startChange(ws);
    writeFileSync(join(ws, 'a.txt'), 'agent\n');
    writeFileSync(join(ws, '.incrementum-feedback'), 'REQUEST_CHANGES\n\nmore\n');
    writeFileSync(join(ws, '.incrementum-commit-message'), 'draft\n');
    const it1 = await vcs.commitIteration(ws, 'draft');
    writeFileSync(join(ws, 'c.txt'), 'c\n');
    const it2 = await vcs.commitIteration(ws, 'draft 2');
    const final = await vcs.describe(ws, 'Agent work');
    for (const sha of [it1.commit_id, it2.commit_id, final])
      expect(git(repo, 'ls-tree', '-r', '--name-only', sha)).not.toContain('.incrementum-');
    expect(it1.files.map((f) => f.path)).toEqual(['a.txt']);

    const done = await deps.finishSession(asyncStore(store), s1.session.id, 'done');
    expect(done).toMatchObject({ status: 'done' });
    expect(store.todos.get(slug, todo.id)?.status).toBe('done');
    expect(git(ws, 'status', '--porcelain', '--ignored')).toBe('');
    expect(store.workspaces.list(slug)).toMatchObject([{ path: ws, status: 'free', session_id: null }]);
    // Finishing twice is harmless.
    await deps.finishSession(asyncStore(store), s1.session.id, 'done');

    // Reused, clean, with the copy made again; a failed session reopens its todo.
    const todo2 = store.todos.create(slug, { title: 'again' });
    const s2 = await start(todo2.id, { copy: ['.env'] });
    expect(s2.workspacePath).toBe(ws);
    expect(readFileSync(join(ws, '.env'), 'utf8')).toBe('SECRET=1\n');
    expect(git(ws, 'rev-parse', 'HEAD')).toBe(s2.baseRev);
    await deps.finishSession(asyncStore(store), s2.session.id, 'failed');
    expect(store.todos.get(slug, todo2.id)?.status).toBe('open');

    await vcs.removeWorkspace(repo, ws);
    git(repo, 'reflog', 'expire', '--expire=now', '--all');
    git(repo, 'gc', '-q', '--prune=now');
    for (const sha of [it1.commit_id, it2.commit_id, final])
      expect(git(repo, 'cat-file', '-t', sha)).toBe('commit');
    expect(checkoutSnapshot(repo)).toEqual(before);
  });

  it('refuses, with a clear message and nothing claimed, what the user got wrong', async () => {
    const todo = store.todos.create(slug, { title: 't' });
    const plain = join(tmp.path, 'plain');
    mkdirSync(plain);
    const cases: [() => Promise<unknown>, RegExp][] = [
      [() => start(todo.id, { repoRoot: plain }), /is not inside a git repository/],
      [() => start(todo.id, { rev: 'nope' }), /^unknown revision 'nope' in /],
      [() => start(todo.id, { copy: ['README.md'] }), /git does not ignore it/],
      [() => start(todo.id, { copy: ['../outside'] }), /give a path inside the repository/],
      [() => start('no-such-todo'), /^no todo no-such-todo/],
    ];
    for (const [p, re] of cases) {
      const err = await rejection(p());
      expect(err).toBeInstanceOf(UserError);
      expect(err.message).toMatch(re);
    }
    const empty = join(tmp.path, 'empty');
    mkdirSync(empty);
    git(empty, 'init', '-q');
    const err = await rejection(start(todo.id, { repoRoot: empty }));
    expect(err.message).toMatch(/has no commits yet/);
    expect(store.workspaces.list()).toEqual([]);
    expect(store.sessions.list(slug)).toEqual([]);
    expect(store.todos.get(slug, todo.id)?.status).toBe('open');
  });

  it('re-creates a free workspace whose directory was deleted, and clears debris at a new path', async () => {
    const t1 = store.todos.create(slug, { title: 'one' });
    const s1 = await start(t1.id);
    await deps.finishSession(asyncStore(store), s1.session.id, 'failed');
    execFileSync('rm', ['-rf', s1.workspacePath]);
    const s2 = await start(store.todos.create(slug, { title: 'two' }).id);
    expect(s2.workspacePath).toBe(s1.workspacePath);
    expect(git(s2.workspacePath, 'rev-parse', 'HEAD')).toBe(s2.baseRev);
    // Debris where workspace 2 will go.
    const debris = join(store.dir, 'workspaces', slug, '2');
    mkdirSync(debris, { recursive: true });
    writeFileSync(join(debris, 'junk'), 'x');
    const s3 = await start(store.todos.create(slug, { title: 'three' }).id);
    expect(s3.workspacePath).toBe(debris);
    expect(existsSync(join(debris, 'junk'))).toBe(false);
    expect(readFileSync(join(debris, 'a.txt'), 'utf8')).toBe('a\n');
  });

  it("a job starting while a landing removes its job's workspace gets another one", async () => {
    // What a landing does (releaseJobWorkspace): drop the free workspace's
    // record, then remove its directory and branch. A job claiming a
    // workspace in between must not be given that path.
    const landed = await start(store.todos.create(slug, { title: 'landed' }).id);
    await deps.finishSession(asyncStore(store), landed.session.id, 'done');
    expect(store.workspaces.removeIfFree(landed.workspacePath)).toBe(true);
    const next = await start(store.todos.create(slug, { title: 'next' }).id);
    await vcs.removeWorkspace(repo, landed.workspacePath);
    // (Given the same number, its worktree and branch went with the landing's.)
    expect(git(next.workspacePath, 'rev-parse', 'HEAD')).toBe(next.baseRev);
    const branch = store.workspaces.list(slug).find((w) => w.path === next.workspacePath)?.branch;
    expect(git(next.workspacePath, 'symbolic-ref', '--short', 'HEAD')).toBe(branch);
    expect(next.workspacePath).not.toBe(landed.workspacePath);
    expect(existsSync(landed.workspacePath)).toBe(false);
  });

  it('a session finished twice at once never frees the workspace a new job claimed meanwhile', async () => {
    // An abandon and a prune can both end one dead job's session: both read
    // the workspace as held by it before either has released it.
    const x = await start(store.todos.create(slug, { title: 'x' }).id);
    let open = () => {};
    const gate = new Promise<void>((r) => (open = r));
    let resets = 0;
    class SlowSecondReset extends GitVcs {
      override async resetWorkspace(path: string, branch: string, base: string): Promise<void> {
        if (++resets === 2) await gate;
        return super.resetWorkspace(path, branch, base);
      }
    }
    const slow = new SlowSecondReset();
    const first = finishSession(asyncStore(store), x.session.id, 'failed', slow);
    const second = finishSession(asyncStore(store), x.session.id, 'failed', slow);
    await first;
    const y = await start(store.todos.create(slug, { title: 'y' }).id);
    expect(y.workspacePath).toBe(x.workspacePath);
    open();
    await second;
    expect(store.workspaces.list(slug).map((w) => [w.path, w.status, w.session_id])).toEqual([
      [y.workspacePath, 'acquired', y.session.id],
    ]);
  });

  it('prune never removes a workspace a job claims while it runs', async () => {
    const todo = (title: string) => store.todos.create(slug, { title }).id;
    const free = await start(todo('free'));
    const ended = await start(todo('ended'));
    await deps.finishSession(asyncStore(store), free.session.id, 'done');
    store.sessions.setStatus(ended.session.id, 'failed'); // ended, its workspace not yet released
    // While prune removes the first workspace, jobs start: one is given the
    // ended session's workspace (released just then, as finishSession
    // does), one a new workspace.
    let started: Awaited<ReturnType<typeof start>>[] = [];
    class StartingVcs extends GitVcs {
      override async removeWorkspace(root: string, path: string): Promise<void> {
        if (started.length === 0) {
          store.workspaces.release(ended.workspacePath);
          started = [await start(todo('reuses')), await start(todo('new'))];
        }
        await super.removeWorkspace(root, path);
      }
    }
    const pruned = await pruneWorkspaces(
      asyncStore(store),
      { root: repo, slug, stateDir: store.dir },
      new StartingVcs(),
    );
    expect(started.map((s) => s.workspacePath)).toEqual([
      ended.workspacePath,
      join(store.dir, 'workspaces', slug, '3'),
    ]);
    expect(pruned.removed.map((p) => [p.path, p.reason])).toEqual([[free.workspacePath, 'free']]);
    for (const s of started) {
      expect(git(s.workspacePath, 'rev-parse', 'HEAD')).toBe(s.baseRev);
      expect(readFileSync(join(s.workspacePath, 'a.txt'), 'utf8')).toBe('a\n');
    }
    expect(store.workspaces.list(slug).map((w) => [w.path, w.session_id])).toEqual(
      started.map((s) => [s.workspacePath, s.session.id]),
    );
  });

  it('ii workspace list shows them; prune removes finished and orphaned ones, keeping the rest', async () => {
    const env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: tmp.path };
    const todo = (title: string) => store.todos.create(slug, { title }).id;
    writeFileSync(join(repo, 'a.txt'), 'user edit\n');
    writeFileSync(join(repo, 'untracked.txt'), 'mine\n');
    const before = checkoutSnapshot(repo);

    const done = await start(todo('finished'));
    const active = await start(todo('active'));
    const crashed = await start(todo('crashed'));
    const vanished = await start(todo('vanished'));
    // A job's change: prune keeps the refs of every change a job records.
    const doneChange = await vcs.startChange(done.workspacePath);
    const doneJob = store.jobs.create(slug, { todo_id: done.session.todo_id, pid: null, host: null });
    store.jobs.appendChange(doneJob.id, doneChange);
    writeFileSync(join(done.workspacePath, 'x.txt'), 'x\n');
    const it1 = await vcs.commitIteration(done.workspacePath, 'x');
    await deps.finishSession(asyncStore(store), done.session.id, 'done');
    store.sessions.setStatus(crashed.session.id, 'failed'); // ended without releasing
    await deps.finishSession(asyncStore(store), vanished.session.id, 'failed');
    execFileSync('rm', ['-rf', vanished.workspacePath]);
    const orphan = join(store.dir, 'workspaces', slug, '99');
    await vcs.addWorkspace(repo, orphan, 'incrementum/ws-99', done.baseRev);

    const listed = ii(['workspace', 'list', '--json'], { cwd: repo, env });
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout) as {
      path: string;
      status: string;
      exists: boolean;
      todo_id: string | null;
    }[];
    expect(rows.map((r) => [r.path, r.status, r.exists])).toEqual([
      [done.workspacePath, 'free', true],
      [active.workspacePath, 'acquired', true],
      [crashed.workspacePath, 'acquired', true],
      [vanished.workspacePath, 'free', false],
    ]);
    expect(rows[1]!.todo_id).toBe(active.session.todo_id);
    const text = ii(['workspace', 'list'], { cwd: join(repo), env });
    expect(text.stdout).toMatch(/incrementum\/workspace-2\/work\s+in use/);
    expect(text.stdout).toMatch(/incrementum\/workspace-4\/work\s+missing/);

    // 2 MiB of build output in a finished workspace: prune says it freed at least that.
    writeFileSync(join(done.workspacePath, 'build.bin'), Buffer.alloc(2 * 1024 * 1024, 7));
    const pruned = ii(['workspace', 'prune'], { cwd: repo, env });
    expect(pruned.code, pruned.stderr).toBe(0);
    const lines = pruned.stdout.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      `removed ${done.workspacePath} (free)`,
      `removed ${crashed.workspacePath} (finished session)`,
      `removed ${vanished.workspacePath} (missing directory)`,
      `removed ${orphan} (no record)`,
    ]);
    const freed = /^Pruned 4 workspaces, freeing ([\d.]+) MB\.$/.exec(lines[4]!);
    expect(freed, lines[4]).not.toBeNull();
    expect(Number(freed![1])).toBeGreaterThanOrEqual(2);
    expect(lines.slice(5)).toEqual(['']);
    for (const p of [done.workspacePath, crashed.workspacePath, orphan]) expect(existsSync(p)).toBe(false);
    expect(store.workspaces.list(slug).map((w) => w.path)).toEqual([active.workspacePath]);
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(2);
    expect(git(repo, 'branch', '--list', 'incrementum/*')).toBe('+ incrementum/workspace-2/work');
    expect(git(active.workspacePath, 'rev-parse', 'HEAD')).toBe(active.baseRev);
    git(repo, 'reflog', 'expire', '--expire=now', '--all');
    git(repo, 'gc', '-q', '--prune=now');
    expect(git(repo, 'cat-file', '-t', it1.commit_id)).toBe('commit');
    expect(checkoutSnapshot(repo)).toEqual(before);

    expect(ii(['workspace', 'prune'], { cwd: repo, env }).stdout).toBe('Nothing to prune.\n');
    const plain = join(tmp.path, 'plain');
    mkdirSync(plain);
    const outside = ii(['workspace', 'list'], { cwd: plain, env });
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('not inside a git repository');
  });
});
