// The body of ii run (definition in index.ts): check what a job needs once,
// hand the scheduling to src/backlog/scheduler.ts, show its progress, and
// turn Ctrl-C into "start no more" then "abandon them".
import { hostName } from '../../proc/host.js';
import { BacklogRunner, type BacklogRunEvent, type BacklogRunResult } from '../../backlog/scheduler.js';
import { checkIdentity } from '../../doctor/repo-checks.js';
import { loadConfig } from '../../job/config.js';
import { runnerAlive } from '../../model/backlog-runner.js';
import type { Job } from '../../model/job.js';
import { localProbe } from '../../proc/alive.js';
import { spawnStandbyJob } from '../../job/detached.js';
import { checkLaunch } from '../../job/launch.js';
import { sandboxWarning } from '../../proc/sandbox/sandbox.js';
import { byCompletion, LandQueue, toLand, type ToLand } from '../../land/merge-queue.js';
import { finalCommit } from '../../land/plan.js';
import { reapedLine } from '../../job/dead-runner.js';
import { settledLine } from '../../job/stranded.js';
import { shownLine, shownText } from '../../text/shown.js';
import { currentRepo, withStore } from '../context.js';
import { style } from '../format.js';
import { endSessionOf, realDeps, realLandingVcs } from '../job/deps.js';
import { keepRunningWithoutOutput } from '../output.js';
import type { RunOptions } from './options.js';
import { LiveArea } from './live-area.js';
import { jobLine, reasonLine, totalLine } from './view.js';

/** How often a run tells the store it is alive (another host's board judges it by this). */
const RUNNER_BEAT_MS = 5000;

export async function runBacklog(o: RunOptions): Promise<void> {
  const repo = currentRepo();
  const config = loadConfig(repo.root);
  // What would fail every job (no test commands, a missing agent, broken
  // templates) fails here once, before any job is started.
  const { base } = await checkLaunch(await realDeps(), {
    repo,
    config,
    ...(o.agent ? { agent: o.agent } : {}),
    ...(o.rev ? { rev: o.rev } : {}),
  });
  const slots = o.jobs ?? config.run.jobs;
  // Its jobs do not each say it: once here.
  const ident = checkIdentity(repo.root);
  if (!ident.ok) process.stderr.write(`warning: ${ident.detail}; ii doctor says how to set one\n`);
  const unsandboxed = sandboxWarning(config);
  if (unsandboxed) process.stderr.write(`warning: ${unsandboxed}\n`);
  // --rev, else the branch checked out now, is every job's base, each at
  // its tip when the job starts (a dep landed meanwhile is in it), even if
  // the checkout is switched during the run; said once. A detached HEAD:
  // that commit.
  const rev = base.branch ?? o.rev ?? base.sha;
  const now = base.sha.slice(0, 10);
  process.stderr.write(
    base.branch || o.rev
      ? `jobs start from ${shownLine(rev)}, as it is when each starts (now ${now})\n`
      : `jobs start from ${now}, the detached HEAD of ${shownLine(repo.root)}\n`,
  );
  // Below the person's own work ([run] nice): each runner, its agent and its tests.
  const nice = o.nice ?? config.run.nice;
  const jobOpts = { ...(o.agent ? { agent: o.agent } : {}), rev, ...(nice ? { nice } : {}) };
  const out = process.stderr;
  const tty = out.isTTY === true;
  const st = style(tty && !process.env.NO_COLOR);
  keepRunningWithoutOutput(() => {});

  /** Completed jobs of this run with commits: what a person could land. */
  let landable = 0;
  let queue = null as LandQueue | null; // set inside withStore (a cast, so TS does not narrow it to null)
  /** Jobs an earlier landing runner left to land, landed first by this one. */
  let leftover = new Set<string>();
  const result = await withStore(async (store) => {
    let changed = false;
    let lastTotal = '';
    // Recorded so the board shows this run and its +/- change its slots.
    const me = await store.runners.register({
      repo: repo.slug,
      pid: process.pid,
      host: hostName(),
      slots,
      watch: o.watch === true,
      // The board decides readiness as this run does (model/backlog.ts depsLanded).
      lands: o.land === true,
    });
    let slotsSeen = slots;
    // This run's own row as the look's list of runners read it (starts.others,
    // first in each look): its slots then cost no query of their own, one of
    // the five a look made on a shared store.
    let mine: Awaited<ReturnType<typeof store.runners.get>> | undefined;
    let beatAt = Date.now();
    const runner: BacklogRunner = new BacklogRunner({
      store,
      repo,
      finishSession: endSessionOf(store),
      slots,
      slotsNow: async () => {
        const row = mine ?? (await store.runners.get(me.id));
        mine = undefined;
        const now = row?.slots ?? slotsSeen;
        if (now !== slotsSeen) {
          slotsSeen = now;
          line(`slots: ${now} (changed from the dashboard)`);
        }
        return now;
      },
      maxAttempts: config.run['max-attempts'],
      // Landing as it goes: a dependent todo starts from the branch, so it
      // waits until its deps' commits are on it, not merely completed. Each
      // job is recorded as to land when it claims its todo, so a landing
      // runner lands it even if this one is killed.
      ...(o.land
        ? { depsLanded: true, toLand: true, pending: () => (queue?.pending ?? 0) > 0 || finishing > 0 }
        : {}),
      starts: {
        others: async () => {
          const all = await store.runners.list(repo.slug);
          mine = all.find((r) => r.id === me.id) ?? null;
          return all
            .filter((r) => r.id !== me.id && runnerAlive(r, Date.now(), localProbe))
            .flatMap((r) => r.starting.map((todo) => ({ todo, here: r.host === hostName() })));
        },
        take: (todoId) =>
          store.runners.takeStart(me.id, todoId, (others) =>
            others.some((r) => r.starting.includes(todoId) && runnerAlive(r, Date.now(), localProbe)),
          ),
        set: (todoIds) => store.runners.setStarting(me.id, todoIds),
      },
      ...(o.watch ? { watch: true } : {}),
      ...(o.maxJobs !== undefined ? { maxJobs: o.maxJobs } : {}),
      ...jobOpts,
      wakeOnWrite: true,
      standby: () => spawnStandbyJob(repo, store.dir, { ...jobOpts, ...(o.land ? { toLand: true } : {}) }),
      onEvent: (e) => line(describe(e)),
      onTick: async (snap) => {
        await feed();
        if (Date.now() - beatAt > RUNNER_BEAT_MS) {
          beatAt = Date.now();
          await store.runners.heartbeat(me.id);
        }
        // Without a terminal: the total once after each look that changed
        // something, and only when it says something new (a landing's lines
        // change nothing it counts).
        if (tty || !changed) return;
        changed = false;
        const total = totalLine(snap);
        if (total === lastTotal) return;
        lastTotal = total;
        out.write(`${total}\n`);
      },
    });
    const screen = new LiveArea(out, (width) => {
      const s = runner.snapshot();
      return [...s.mine.map((r) => `  ${jobLine(r, Date.now(), width - 2)}`), st.bold(totalLine(s))];
    });
    const line = (text: string | null) => {
      if (text === null) return;
      screen.say(text);
      changed = true;
    };
    /** A completed job of a landing run that made no commits (so it is not to land) says so. */
    const nothingToLand = (job: Job | null | undefined): string =>
      job && !finalCommit(job) ? ' (no commits: nothing to land)' : '';
    /** Why a job failed or was abandoned, as its record says: its first line that says something, short. */
    const why = (job: Job | null | undefined): string => {
      const reason = job?.failure_reason;
      if (!reason) return '';
      const line = shownLine(reasonLine(reason));
      return `: ${line.length > 160 ? `${line.slice(0, 159)}…` : line}`;
    };
    const describe = (e: BacklogRunEvent): string | null => {
      if (e.kind === 'reaped') return st.yellow(reapedLine(e.cleanup));
      if (e.kind === 'settled') return st.yellow(settledLine(e.settled));
      const t = `${e.kind === 'stopping' ? '' : `${e.todo.id} ${shownLine(e.todo.title)}`}`;
      switch (e.kind) {
        case 'started':
          return `started ${t} (${e.standby ? 'standby runner' : 'runner'} pid ${e.pid}; its output: ${e.log})`;
        case 'claimed':
          return tty ? null : `${t}: job ${e.job_id}`;
        case 'ended':
          if (e.outcome === 'lost') return `${t}: taken by another runner first; not run here`;
          if (e.outcome === 'completed')
            return st.green(`${t}: job ${e.job_id} completed`) + (o.land ? nothingToLand(e.job) : '');
          if (e.outcome === 'not-started')
            return st.red(`${t}: could not start a job (see ${e.log}); not tried again by this run`);
          return st.red(
            `${t}: job ${e.job_id} ${e.outcome === 'stale' ? 'left running with its runner gone' : `${e.outcome}${why(e.job)}`} (ii job show ${e.job_id})`,
          );
        case 'abandoning':
          return st.yellow(`${t}: job ${e.job_id} asked to abandon as it started`);
        case 'stopping': {
          const n = e.running.length + e.starting;
          if (n === 0) return st.yellow('stopping: no new jobs.');
          const which = [
            ...(e.running.length ? [e.running.join(', ')] : []),
            ...(e.starting ? [`${e.starting} starting`] : []),
          ].join('; ');
          return st.yellow(
            `stopping: no new jobs. ${n} still running (${which}); they go on without ii run. Watch them: ii dashboard · stop one: ii job abandon <job> · Ctrl-C again abandons them all.`,
          );
        }
      }
    };

    // --land: a merge queue (src/land/merge-queue.ts) of every job that is to
    // land, this run's and those a killed landing runner left, each landed
    // as it completes (once its runner has finished), oldest completion first.
    let finishing = 0;
    const feed = async () => {
      if (!queue) return;
      const t = await toLand(store, repo.slug);
      finishing = t.finishing.length;
      for (const j of t.ready) queue.add(j);
    };
    if (o.land)
      queue = new LandQueue({
        store,
        repo,
        config,
        vcs: await realLandingVcs(),
        deps: realDeps,
        // Its tests are a job's tests, run here: at the jobs' priority, not ii run's own.
        ...(nice ? { nice } : {}),
        // Said the moment it is recorded, before the workspace is released
        // and the journal written: the record wakes the runner, which may
        // start a dependent todo, and that line must not come first.
        onLanded: (jobId, l) =>
          line(st.green(`job ${jobId} landed on ${l.onto} at ${l.commit.slice(0, 10)}`)),
        onRefused: (jobId, message) => line(st.red(`job ${jobId} not landed: ${shownText(message)}`)),
        onNothing: (jobId) => line(`job ${jobId} made no commits: nothing to land`),
      });

    let interrupts = 0;
    const onSignal = (sig: NodeJS.Signals) => {
      interrupts++;
      if (sig === 'SIGINT' && interrupts >= 2) {
        line(st.yellow('abandoning the jobs this run started…'));
        void runner.abandonRunning('ii run was interrupted twice (Ctrl-C)').then(
          (ids) => {
            const starting = runner.startingCount();
            if (ids.length)
              line(
                st.yellow(
                  `asked ${ids.length} job${ids.length === 1 ? '' : 's'} to abandon: ${ids.join(', ')}`,
                ),
              );
            if (starting)
              line(
                st.yellow(`${starting} still starting: each is asked to abandon as soon as its job exists`),
              );
          },
          (err: unknown) =>
            line(
              st.red(
                `could not ask the jobs to abandon: ${shownText(err instanceof Error ? err.message : String(err))}`,
              ),
            ),
        );
        return;
      }
      runner.stop();
    };
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    for (const sig of signals) process.on(sig, onSignal);
    const ticker = tty ? setInterval(() => screen.draw(), 1000) : null;
    line(
      `ii run: ${slots} slot${slots === 1 ? '' : 's'}${o.watch ? ', watching for new todos' : ''}${o.maxJobs ? `, at most ${o.maxJobs} job${o.maxJobs === 1 ? '' : 's'}` : ''}`,
    );
    leftover = sayLeftToLand(await toLand(store, repo.slug), o.land === true, line, st);
    await feed();
    try {
      const r = await runner.run();
      await queue?.idle();
      for (const id of r.completed) {
        const job = await store.jobs.get(id);
        if (job && finalCommit(job) !== null) landable++;
      }
      return r;
    } finally {
      if (ticker) clearInterval(ticker);
      screen.clear();
      for (const sig of signals) process.off(sig, onSignal);
      await store.runners.remove(me.id);
    }
  });
  let code = report(result, st);
  if (queue) {
    const { landed, notLanded } = queue;
    const theirs = landed.filter((id) => leftover.has(id)).length;
    process.stderr.write(
      `landed ${landed.length} job${landed.length === 1 ? '' : 's'}` +
        (theirs ? ` (${theirs} of them left to land by an earlier ii run --land)` : '') +
        (notLanded.length ? `; not landed: ${notLanded.join(', ')} (ii job land <job> says why)` : '') +
        '\n',
    );
    if (notLanded.length) code = 1;
  } else {
    // Only jobs with commits can land: a job that changed nothing gets no hint.
    if (landable)
      process.stderr.write(
        `land ${landable === 1 ? 'it' : 'them'} (rebased onto the branch as it is now, tested there): ii job land <job> for each, or ii run --land next time to land each as it completes\n`,
      );
  }
  process.exitCode = code;
}

/**
 * What is left to land as a run starts: a landing run lands it first (and
 * says which, and which it leaves to a person); a run without --land lands
 * nothing, and says so. Returns the jobs this run will land first.
 */
function sayLeftToLand(
  t: ToLand,
  landing: boolean,
  line: (text: string) => void,
  st: ReturnType<typeof style>,
): Set<string> {
  const waiting = [...t.ready, ...t.finishing].sort(byCompletion);
  const ids = (jobs: { id: string }[]) => jobs.map((j) => j.id).join(', ');
  if (!landing) {
    if (waiting.length)
      line(
        st.yellow(
          `${waiting.length} completed job${waiting.length === 1 ? ' is' : 's are'} to land (started by ii run --land): ${ids(waiting)}; this run lands nothing, ii run --land lands ${waiting.length === 1 ? 'it' : 'them'} first`,
        ),
      );
    return new Set();
  }
  if (waiting.length)
    line(`to land first, left by an earlier ii run --land (oldest completion first): ${ids(waiting)}`);
  for (const j of t.refused)
    line(
      st.yellow(
        `job ${j.id} is to land, but its landing was refused${j.landing ? ` (${shownLine(reasonLine(j.landing.step))})` : ''}: not tried again; ii job land ${j.id} does`,
      ),
    );
  return new Set(waiting.map((j) => j.id));
}

function report(r: BacklogRunResult, st: ReturnType<typeof style>): number {
  const ran = r.completed.length + r.failed.length;
  if (ran === 0) {
    process.stderr.write('nothing to run: no todo is ready (ii todo list shows why).\n');
    return 0;
  }
  const msg = `ran ${ran} job${ran === 1 ? '' : 's'}: ${r.completed.length} completed, ${r.failed.length} did not`;
  process.stderr.write((r.failed.length ? st.red(msg) : st.green(msg)) + '\n');
  for (const f of r.failed)
    process.stderr.write(
      f.job_id
        ? `  ${f.todo_id}: job ${f.job_id} ${f.outcome} · ii job show ${f.job_id}\n`
        : `  ${f.todo_id}: no job could start\n`,
    );
  return r.failed.length ? 1 : 0;
}
