// The backlog runner's view (what ii run draws under each line): a job that
// ended is out of it, and counted, by the time its end is told.
import { spawn, type ChildProcess } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BacklogRunner, type BacklogSnapshot } from '../../src/backlog/scheduler.js';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore } from '../../src/state/index.js';
import { tempDir } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
const children: ChildProcess[] = [];
beforeEach(() => {
  tmp = tempDir();
  store = openStateStore({ dir: join(tmp.path, 'incrementum') });
});
afterEach(() => {
  for (const c of children) c.kill('SIGKILL');
  store.close();
  tmp.cleanup();
});

/** What every runner here shares: the test's store and repository, 2 attempts, a look every 20 ms. */
const base = () => ({
  store: asyncStore(store),
  finishSession: async () => {},
  repo: { root: tmp.path, slug: 'r' },
  maxAttempts: 2,
  pollMs: 20,
});

it('a job that ended is out of the view, and counted done, when its end is told', async () => {
  const todo = store.todos.create('r', { title: 'A' });
  let jobId = '';
  let ended = false;
  const seenAtEnd: BacklogSnapshot[] = [];
  const runner: BacklogRunner = new BacklogRunner({
    ...base(),
    slots: 1,
    // A runner stand-in: a real process that lives until its stdin ends, and its job, reviewing.
    start: (t) => {
      const c = spawn(
        process.execPath,
        ['-e', 'process.stdin.resume(); process.stdin.on("end", () => process.exit(0))'],
        {
          stdio: ['pipe', 'ignore', 'ignore'],
        },
      );
      children.push(c);
      const job = store.jobs.claim('r', { todo_id: t.id, pid: c.pid!, host: hostname() }, () => null);
      store.jobs.setStage(job.id, 'reviewing');
      jobId = job.id;
      return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
    },
    onTick: (snap) => {
      // Once the view has seen it reviewing, the job completes and its runner exits.
      if (ended || snap.mine[0]?.job?.stage !== 'reviewing') return;
      ended = true;
      store.jobs.finish(jobId, 'completed');
      store.todos.setStatus('r', todo.id, 'done');
      children[0]!.stdin!.end();
    },
    onEvent: (e) => {
      if (e.kind === 'ended') seenAtEnd.push(runner.snapshot());
    },
  });
  const r = await runner.run();
  expect(r.completed).toEqual([jobId]);
  expect(seenAtEnd).toHaveLength(1);
  expect(seenAtEnd[0]!.mine).toEqual([]);
  expect(seenAtEnd[0]!.completed).toBe(1);
});

/** A job claimed by `pid` for `todoId`, reviewing (so the view can see it), as a runner would. */
function claimReviewing(todoId: string, pid: number): void {
  const job = store.jobs.claim('r', { todo_id: todoId, pid, host: hostname() }, () => null);
  store.jobs.setStage(job.id, 'reviewing');
}

/** A process standing in for a runner: it lives until its stdin ends (and `lingerMs` more). */
function stdinBound(lingerMs = 0): ChildProcess {
  const c = spawn(
    process.execPath,
    [
      '-e',
      `process.stdin.resume(); process.stdin.on("end", () => setTimeout(() => process.exit(0), ${lingerMs}))`,
    ],
    {
      stdio: ['pipe', 'ignore', 'ignore'],
    },
  );
  children.push(c);
  return c;
}

it.each([
  [1, 4, 1],
  [2, 4, 2],
  [2, 3, 1],
  [3, 6, 2],
])(
  'slots %i, %i todos: at most %i standbys wait (never more than the slots, the todos left to start, or two), the oldest is handed the next todo, none is left at the end',
  async (slots, todos, most) => {
    for (let i = 0; i < todos; i++) store.todos.create('r', { title: `T${i}` });
    const made: { child: ChildProcess; state: 'waiting' | 'handed' | 'dismissed' }[] = [];
    const handedOrder: number[] = [];
    let mostWaiting = 0;
    const waitingNow = () => made.filter((m) => m.state === 'waiting').length;
    const runner = new BacklogRunner({
      ...base(),
      slots,
      start: (t) => {
        const c = stdinBound();
        claimReviewing(t.id, c.pid!);
        return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
      },
      standby: () => {
        const c = stdinBound();
        const m = { child: c, state: 'waiting' as 'waiting' | 'handed' | 'dismissed' };
        const index = made.push(m) - 1;
        mostWaiting = Math.max(mostWaiting, waitingNow());
        return {
          pid: c.pid!,
          log: join(tmp.path, 'standby.log'),
          child: c,
          handOver: (todoId) => {
            m.state = 'handed';
            handedOrder.push(index);
            claimReviewing(todoId, c.pid!);
            return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
          },
          dismiss: () => {
            m.state = 'dismissed';
            c.stdin!.end();
          },
          onBack: () => {}, // these runners never come back: each job's end is its exit
        };
      },
      onTick: (snap) => {
        // Every job seen reviewing completes, and its runner exits.
        for (const j of snap.mine) {
          if (j.job?.stage !== 'reviewing' || j.job.status !== 'active') continue;
          store.jobs.finish(j.job.id, 'completed');
          store.todos.setStatus('r', j.todo.id, 'done');
          children.find((c) => c.pid === j.pid)?.stdin!.end();
        }
      },
    });
    const r = await runner.run();
    expect(r.completed).toHaveLength(todos);
    expect(mostWaiting).toBe(most);
    // Handed in the order they were started: the oldest has had the longest to load.
    expect(handedOrder).toEqual([...handedOrder].sort((a, b) => a - b));
    expect(waitingNow()).toBe(0);
    // The dismissed ones exit (their stdin ended): none is left.
    await Promise.all(
      made
        .filter((m) => m.state === 'dismissed')
        .map((m) => (m.child.exitCode !== null ? null : new Promise((res) => m.child.once('exit', res)))),
    );
  },
);

it("a standby's replacement is not started in the look that hands its todo over: only once that runner's claim is seen (or it ended)", async () => {
  for (let i = 0; i < 6; i++) store.todos.create('r', { title: `T${i}` });
  /** Per standby started: whether a todo handed over was not yet seen claimed then. */
  const startedBeforeClaim: boolean[] = [];
  const unclaimed = new Set<string>();
  let handOvers = 0;
  let replacements = 0;
  const looks = new Map<string, number>();
  const claim = (todoId: string, pid: number) =>
    store.jobs.claim('r', { todo_id: todoId, pid, host: hostname() }, () => null);
  const runner = new BacklogRunner({
    ...base(),
    slots: 1,
    // Longer than the test: only the claim (or the runner's end) lifts it.
    standbyHoldMs: 600_000,
    start: (t) => {
      const c = stdinBound();
      claim(t.id, c.pid!);
      return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
    },
    standby: () => {
      const c = stdinBound();
      startedBeforeClaim.push(unclaimed.size > 0);
      if (handOvers > 0) replacements++;
      return {
        pid: c.pid!,
        log: join(tmp.path, 'standby.log'),
        child: c,
        handOver: (todoId) => {
          handOvers++;
          unclaimed.add(todoId);
          claim(todoId, c.pid!);
          return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
        },
        dismiss: () => c.stdin!.end(),
        onBack: () => {},
      };
    },
    onEvent: (e) => {
      if (e.kind === 'claimed' || e.kind === 'ended') unclaimed.delete(e.todo.id);
    },
    onTick: (snap) => {
      // A job ends on the second look that sees it, so a replacement has a look to start in.
      for (const j of snap.mine) {
        if (!j.job || j.job.status !== 'active') continue;
        const seen = (looks.get(j.job.id) ?? 0) + 1;
        looks.set(j.job.id, seen);
        if (seen < 2) continue;
        store.jobs.finish(j.job.id, 'completed');
        store.todos.setStatus('r', j.todo.id, 'done');
        children.find((c) => c.pid === j.pid)?.stdin!.end();
      }
    },
  });
  const r = await runner.run();
  expect(r.completed).toHaveLength(6);
  expect(handOvers).toBeGreaterThanOrEqual(1);
  expect(replacements).toBeGreaterThanOrEqual(1);
  expect(startedBeforeClaim.every((early) => !early)).toBe(true);
});

it.each([
  [1, 12],
  [2, 12],
])(
  'slots %i, %i todos: a standby whose job ended comes back and is handed a later todo first; no replacement is started for it, its exit is listened to once, none is left at the end',
  async (slots, todos) => {
    for (let i = 0; i < todos; i++) store.todos.create('r', { title: `T${i}` });
    const made: { child: ChildProcess; back: ((code: number) => void) | null; jobs: number }[] = [];
    /** The process each handed todo went to, in hand-over order. */
    const handedTo: number[] = [];
    /** The processes that came back, in turn; and per hand-over, whether it went to one that ran a job before. */
    const cameBack: number[] = [];
    const reusedAt: boolean[] = [];
    const wrappingUp: number[] = [];
    const runner = new BacklogRunner({
      ...base(),
      slots,
      standbyHoldMs: 0,
      start: (t) => {
        const c = stdinBound();
        claimReviewing(t.id, c.pid!);
        return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
      },
      standby: () => {
        // Each closes its store before it exits: the run's end waits for that.
        const c = stdinBound(300);
        const m = { child: c, back: null as ((code: number) => void) | null, jobs: 0 };
        const index = made.push(m) - 1;
        return {
          pid: c.pid!,
          log: join(tmp.path, 'standby.log'),
          child: c,
          handOver: (todoId) => {
            reusedAt.push(m.jobs > 0);
            m.jobs++;
            handedTo.push(index);
            claimReviewing(todoId, c.pid!);
            return { pid: c.pid!, log: join(tmp.path, `${todoId}.log`), child: c };
          },
          dismiss: () => c.stdin!.end(),
          onBack: (cb) => (m.back = cb),
        };
      },
      onTick: (snap) => {
        // A runner comes back a look after its job ended (its wrap-up takes a while).
        for (const i of wrappingUp.splice(0)) {
          cameBack.push(i);
          made[i]!.back!(0);
        }
        // A job reviewing ends; its runner comes back if it was a standby, else exits.
        for (const j of snap.mine) {
          if (j.job?.stage !== 'reviewing' || j.job.status !== 'active') continue;
          store.jobs.finish(j.job.id, 'completed');
          store.todos.setStatus('r', j.todo.id, 'done');
          const i = made.findIndex((m) => m.child.pid === j.pid);
          if (i < 0) children.find((c) => c.pid === j.pid)?.stdin!.end();
          else wrappingUp.push(i);
        }
        for (const m of made) expect(m.child.listenerCount('exit')).toBeLessThanOrEqual(2);
      },
    });
    const r = await runner.run();
    expect(r.completed).toHaveLength(todos);
    expect(r.failed).toEqual([]);
    // Far fewer processes than jobs: after the first ones come back, none is started for them.
    expect(made.length).toBeLessThanOrEqual(2 * slots + 2);
    expect(made.some((m) => m.jobs >= 3)).toBe(true);
    // Come back and waiting, a runner is handed the next todo before any newer standby: from the
    // first come-back on, every todo went to a runner that had run one.
    expect(cameBack.length).toBeGreaterThan(0);
    const first = reusedAt.indexOf(true);
    expect(first).toBeGreaterThan(0);
    expect(reusedAt.slice(first).every(Boolean)).toBe(true);
    expect(new Set(handedTo).size).toBe(made.filter((m) => m.jobs > 0).length);
    // None is left when the run returns: all dismissed (their stdin ended) and exited.
    expect(made.filter((m) => m.child.exitCode === null && m.child.signalCode === null)).toEqual([]);
  },
);

it('a todo another run claims while this run looks at the store is not started again: the starts are read before the jobs and the todos', async () => {
  const todo = store.todos.create('r', { title: 'B' });
  // Another ii run is starting B: in the registry until it has seen its runner's claim.
  let othersStarting = [todo.id];
  let claimed = false;
  // The claim lands, and that run takes B out of the registry, just as this run asks the registry.
  // Asked last (after the todos and the jobs), B read ready, unclaimed and no longer being started.
  const otherClaims = () => {
    if (claimed) return;
    claimed = true;
    const other = stdinBound();
    store.jobs.claim('r', { todo_id: todo.id, pid: other.pid!, host: hostname() }, () => null);
    othersStarting = [];
  };
  const started: string[] = [];
  const runner = new BacklogRunner({
    ...base(),
    slots: 2,
    starts: {
      others: async () => {
        const was = othersStarting;
        otherClaims();
        return was.filter((id) => othersStarting.includes(id)).map((todo) => ({ todo, here: true }));
      },
      take: async () => true,
      set: async () => {},
    },
    start: (t) => {
      started.push(t.id);
      const c = stdinBound();
      c.stdin!.end(); // a runner that lost the claim ends at once
      return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
    },
    onTick: () => {
      // The other run's job ends, and so does this run.
      const job = store.jobs.list('r').find((j) => j.todo_id === todo.id && j.status === 'active');
      if (!job) return;
      store.jobs.finish(job.id, 'completed');
      store.todos.setStatus('r', todo.id, 'done');
    },
  });
  await runner.run();
  expect(claimed).toBe(true);
  expect(started).toEqual([]);
});

it("another machine's jobs on a shared store take none of this machine's slots: --jobs N is N on each machine", async () => {
  const theirs = store.todos.create('r', { title: 'X' });
  const mine = store.todos.create('r', { title: 'Y' });
  // A job another machine runs (its host is not this one), alive as far as this machine can tell.
  const foreign = store.jobs.claim('r', { todo_id: theirs.id, pid: 1, host: 'another-machine' }, () => null);
  let foreignActive = true;
  let ticks = 0;
  const startedWhileForeignRan: boolean[] = [];
  const runner = new BacklogRunner({
    ...base(),
    slots: 1,
    start: (t) => {
      startedWhileForeignRan.push(foreignActive);
      const c = stdinBound();
      const job = store.jobs.claim('r', { todo_id: t.id, pid: c.pid!, host: hostname() }, () => null);
      store.jobs.finish(job.id, 'completed');
      store.todos.setStatus('r', t.id, 'done');
      c.stdin!.end();
      return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
    },
    onTick: () => {
      // The other machine's job ends after a few looks, so the old count (its job in this slot) ends too.
      if (++ticks < 10 || !foreignActive) return;
      foreignActive = false;
      store.jobs.finish(foreign.id, 'completed');
      store.todos.setStatus('r', theirs.id, 'done');
    },
  });
  await runner.run();
  expect(startedWhileForeignRan).toEqual([true]);
  expect(store.todos.get('r', mine.id)?.status).toBe('done');
});

it('a live job recorded with no host (an older build’s, across an upgrade) takes a slot here, as the board counts it', async () => {
  const old = store.todos.create('r', { title: 'X' });
  const mine = store.todos.create('r', { title: 'Y' });
  // Claimed as a build before hosts were kept did: no host, a heartbeat just now.
  const hostless = store.jobs.claim('r', { todo_id: old.id, pid: 1 }, () => null);
  expect(store.jobs.get(hostless.id)?.host).toBeNull();
  let oldActive = true;
  let ticks = 0;
  const startedWhileOldRan: boolean[] = [];
  const runner = new BacklogRunner({
    ...base(),
    slots: 1,
    start: (t) => {
      startedWhileOldRan.push(oldActive);
      const c = stdinBound();
      const job = store.jobs.claim('r', { todo_id: t.id, pid: c.pid!, host: hostname() }, () => null);
      store.jobs.finish(job.id, 'completed');
      store.todos.setStatus('r', t.id, 'done');
      c.stdin!.end();
      return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
    },
    onTick: () => {
      // The old job ends after a few looks: only then is this machine's one slot free.
      if (++ticks < 10 || !oldActive) return;
      oldActive = false;
      store.jobs.finish(hostless.id, 'completed');
      store.todos.setStatus('r', old.id, 'done');
    },
  });
  await runner.run();
  expect(startedWhileOldRan).toEqual([false]);
  expect(store.todos.get('r', mine.id)?.status).toBe('done');
});

it("a job whose runner is this run's own live child is not probed (no store query for its identity); killed, it is reaped", async () => {
  store.todos.create('r', { title: 'A' });
  let asked = 0;
  const s = asyncStore(store);
  const counted = {
    ...s,
    jobs: new Proxy(s.jobs, {
      get: (t, k) =>
        k === 'runnerStart' ? (...a: [string]) => (asked++, t.runnerStart(...a)) : t[k as keyof typeof t],
    }),
  };
  let looks = 0;
  let killedAt = -1;
  let c: ChildProcess | null = null;
  const runner = new BacklogRunner({
    ...base(),
    store: counted,
    slots: 1,
    // Its todo, reopened by the reaping, is not started again.
    maxJobs: 1,
    start: (t) => {
      c = stdinBound();
      store.jobs.claim('r', { todo_id: t.id, pid: c.pid!, host: hostname() }, () => null);
      return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
    },
    onTick: () => {
      // Ten looks with the runner alive, then it is killed, its job still active.
      if (++looks === 10) {
        expect(asked).toBe(0);
        killedAt = looks;
        c!.kill('SIGKILL');
      }
    },
  });
  const r = await runner.run();
  expect(killedAt).toBe(10);
  expect(r.failed.map((f) => f.outcome)).toEqual(['failed']);
  expect(store.jobs.list('r')[0]?.failure_reason).toMatch(/its runner \(pid \d+\) was gone/);
});
