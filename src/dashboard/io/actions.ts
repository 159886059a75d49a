// What the dashboard's keys do beyond moving: abandon, retry, landing, the
// backlog's keys, loading a code diff; and carrying out the intents
// view/key-intent.ts makes of a key press.
import { UserError } from '../../errors.js';
import { isStale } from '../../model/derive.js';
import {
  loadIterationDiff,
  locateIteration,
  locateIterationPair,
  type IterationRef,
  type LoadedIterationDiff,
} from '../../history/iteration-diff.js';
import { abandonJob, type StaleProbe } from '../../job/abandon.js';
import { describeCleanup } from '../../job/dead-runner.js';
import { assertRetryable, spawnDetachedRetry } from '../../job/retry.js';
import { spawnDetachedIi, spawnDetachedLand, stamp } from '../../job/detached.js';
import { join } from 'node:path';
import { formTodo } from '../view/todo-form.js';
import type { Todo } from '../../model/todo.js';
import type { Job } from '../../model/job.js';
import { blockersOf } from '../../model/backlog.js';
import { runnerAlive, runnersLand } from '../../model/backlog-runner.js';
import { abandonFate } from '../view/todo-fate.js';
import { landable, landPlan } from '../../land/plan.js';
import { count } from '../view/count.js';
import { shownLine } from '../../text/shown.js';
import { localProbe } from '../../proc/alive.js';
import type { AsyncStateStore } from '../../state/async-api.js';
import { GitVcs } from '../../vcs/git.js';
import { fetchJobCommits, jobFetchRemote } from '../../history/fetch-job.js';
import type { LandingVcs } from '../../vcs/landing-vcs.js';
import type { Vcs } from '../../vcs/vcs.js';
import type { Actions } from '../view/actions-api.js';
import { readJobRecord } from './record.js';
import type { BoardSource } from './board-source.js';
import { logIsElsewhere, readStoredLog } from '../../job-log/store-source.js';
import { keyIntents, keyPresses, NO_BACKLOG, type Intent, type KeyFacts } from '../view/key-intent.js';
import { diffKey, iterationLabel } from '../view/state.js';
import { shortJobId } from '../../model/job-id.js';
import type { DashboardStore } from '../view/store.js';
import { openAsk, waitingJobs } from '../view/needs-you.js';
import type { AskAnswer, PermissionAsk } from '../../model/permission-ask.js';
import { answerAsk } from '../../job/answer.js';

export interface ActionDeps {
  /** The store of record the actions write (PostgreSQL with II_DATABASE_URL). */
  state: AsyncStateStore;
  /**
   * The store the board reads (io/sync.ts): what a key press asks before it
   * acts (a question's words: the todo an abandon leaves) is read there, at
   * once, as the rest of the board is. Absent: those words go without it.
   */
  read?: Pick<BoardSource, 'todos' | 'jobs' | 'runners'>;
  dash: DashboardStore;
  /** The repository the dashboard runs in (retries start there); null outside one. */
  repoRoot: string | null;
  probe?: StaleProbe;
  /** Reads iteration diffs (and fetches a job's refs it lacks, when it can); a GitVcs by default. */
  vcs?: Pick<Vcs, 'changedFiles' | 'diff'> & Partial<Pick<Vcs, 'missingCommits' | 'fetchChangeRefs'>>;
  /** Landing's git, for the plan `m` asks to confirm; a GitVcs by default. */
  landingVcs?: LandingVcs;
  /** Releases a stale job's session (workspace freed, todo reopened). */
  finishSession?: (sessionId: string) => Promise<void>;
  /** Starts a retry in the background; defaults to a detached `ii job retry`. */
  spawnRetry?: (jobId: string, repoRoot: string, stateDir: string) => { pid: number; log: string };
  /** Starts a landing in the background; defaults to a detached `ii job land`. */
  spawnLand?: (jobId: string, repoRoot: string, stateDir: string) => { pid: number; log: string };
  /** Starts a job for a todo in the background; defaults to a detached `ii job do <todo>`. */
  spawnJob?: (todoId: string, repoRoot: string, stateDir: string) => { pid: number; log: string };
  /** Starts a backlog runner in the background; defaults to a detached `ii run --watch --jobs N`. */
  spawnRunner?: (slots: number, repoRoot: string, stateDir: string) => { pid: number; log: string };
  /** Stops a runner as Ctrl-C does (SIGINT by default). */
  stopRunner?: (pid: number) => void;
  /**
   * Gives the terminal to `fn` (the board is put away while it runs, then
   * drawn again): how `e` runs $EDITOR. Absent where there is no terminal to give.
   */
  suspend?: (fn: () => void) => void;
  /** Told of each action a key started, while it runs: the board waits for them before it closes its store. */
  track?: (running: Promise<unknown>) => void;
  /** [run] max-attempts as the board knows it (what the abandon question counts); 2 until read. */
  maxAttempts?: () => number;
  /** Records a person's answer for the waiting job's runner; answerAsk (src/job/answer.ts) by default. */
  answerAsk?: (o: {
    store: AsyncStateStore;
    jobId: string;
    answer: AskAnswer;
    note?: string;
    askId?: number;
  }) => PermissionAsk | Promise<PermissionAsk>;
  /** Called after something the sync should pick up at once (the store changed in this process). */
  onChanged?: () => void;
  quit: () => void;
}

const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The repository's config, loaded when a key needs it (it brings zod, which the board's start does without). */
async function repoConfig(root: string) {
  const { loadConfig } = await import('../../job/config.js');
  return loadConfig(root);
}

/** The default session release of a stale job: session failed, workspace freed, todo reopened. */
export function releaseSession(state: AsyncStateStore): (sessionId: string) => Promise<void> {
  return async (sessionId) => {
    const s = await state.sessions.get(sessionId);
    if (!s) return;
    if (s.status === 'active') await state.sessions.setStatus(sessionId, 'failed');
    // Only while it is still this session's: another may have claimed it since.
    const ws = (await state.workspaces.list(s.repo)).find((w) => w.path === s.workspace_path);
    if (ws?.session_id === sessionId) await state.workspaces.release(ws.path);
    if ((await state.todos.get(s.repo, s.todo_id))?.status === 'in_progress')
      await state.todos.setStatus(s.repo, s.todo_id, 'open');
  };
}

/** The default job start of `s`: `ii job do <todo>`, detached, logging beside ii run's. */
function spawnJobDetached(todoId: string, repoRoot: string, stateDir: string) {
  const log = join(stateDir, 'runs', 'board', `${stamp()}-${todoId}.log`);
  return spawnDetachedIi(['job', 'do', todoId, '--no-edit'], repoRoot, stateDir, log);
}

/** The default runner start of `R`: `ii run --watch --jobs N`, detached. */
function spawnRunnerDetached(slots: number, repoRoot: string, stateDir: string) {
  const log = join(stateDir, 'runs', 'board', `${stamp()}-run.log`);
  return spawnDetachedIi(['run', '--watch', '--jobs', String(slots)], repoRoot, stateDir, log);
}

/** What each answer did, for the status bar. */
const ANSWERED: Record<AskAnswer, string> = {
  allow: 'allowed once',
  'allow-always': 'allowed always (for this job)',
  reject: 'rejected',
};

export function createActions(deps: ActionDeps): Actions {
  const probe = deps.probe ?? localProbe;
  const dash = deps.dash;
  const say = (m: string) => dash.getState().setMessage(m);
  /** The repository the board shows, for what acts on its backlog; says why not when there is none. */
  const backlogRepo = (): { slug: string; root: string } | null => {
    const slug = dash.getState().repo;
    if (slug && deps.repoRoot) return { slug, root: deps.repoRoot };
    say(NO_BACKLOG);
    return null;
  };
  const changed = () => deps.onChanged?.();
  /** Requests answered from this board, until the sync shows them answered: the inbox skips them. */
  const answered = new Set<string>();
  const stillOpen = (j: Pick<Job, 'id' | 'status' | 'asking'>) => {
    const a = openAsk(j);
    return !!a && !answered.has(`${j.id}:${a.id}`);
  };

  /** The runner's slots as +/- changed them: the writes under way and the slots they ask for. */
  const slotWrites = { pending: 0, slots: 0, last: Promise.resolve() };

  const actions: Actions = {
    async abandon(jobId, o = {}) {
      const job = await deps.state.jobs.get(jobId);
      if (!job) return say(`job ${jobId} is gone`);
      try {
        const r = await abandonJob(deps.state, deps.state.dir, job, {
          reason: `abandoned from the dashboard${o.closeTodo ? ', its todo closed' : ''}`,
          probe,
          finishSession: deps.finishSession ?? releaseSession(deps.state),
          ...(o.closeTodo ? { closeTodo: true } : {}),
        });
        const closed = o.closeTodo
          ? `; todo ${job.todo_id} closed (ii todo reopen ${job.todo_id} brings it back)`
          : '';
        say(
          r.kind === 'requested'
            ? `abandon requested for ${shortJobId(jobId)}; its runner stops it${closed}`
            : `abandoned stale job ${shortJobId(jobId)}: ${describeCleanup(r.cleanup)}${closed}`,
        );
      } catch (err) {
        say(errText(err));
      }
      deps.onChanged?.();
    },
    async retry(jobId) {
      const job = await deps.state.jobs.get(jobId);
      if (!job) return say(`job ${jobId} is gone`);
      try {
        const stale = isStale(job, Date.now(), probe);
        assertRetryable(job, stale);
        if (!deps.repoRoot)
          throw new UserError('retry needs the dashboard to run inside the job’s repository');
        const r = (deps.spawnRetry ?? spawnDetachedRetry)(jobId, deps.repoRoot, deps.state.dir);
        say(
          `retrying ${shortJobId(jobId)} in the background (pid ${r.pid})${stale && job.status === 'active' ? '; the stale job is ended first (failed: runner gone)' : ''}; its card appears when it starts`,
        );
      } catch (err) {
        say(errText(err));
      }
    },
    async askLand(jobId) {
      const job = await deps.state.jobs.get(jobId);
      if (!job) return say(`job ${jobId} is gone`);
      try {
        landable(job);
        if (!deps.repoRoot)
          throw new UserError('landing needs the dashboard to run inside the job’s repository');
        const repo = { root: deps.repoRoot, slug: job.repo };
        const vcs = deps.landingVcs ?? new GitVcs();
        const plan = await landPlan({ repo, config: await repoConfig(deps.repoRoot), job, vcs });
        const subjects = plan.subjects
          .slice(0, 3)
          .map((t) => `“${shownLine(t)}”`)
          .join(', ');
        const more = plan.subjects.length > 3 ? ` and ${plan.subjects.length - 3} more` : '';
        const tests = plan.test
          ? 'rebased onto its tip and tested there'
          : 'rebased onto its tip, not tested';
        dash.getState().dispatch({
          type: 'confirm',
          confirm: {
            kind: 'land',
            id: jobId,
            prompt: `Land job ${shortJobId(jobId)} on ${shownLine(plan.onto)}: ${count(plan.subjects.length, 'commit')} (${subjects}${more}), ${tests}?${plan.note ? ` (${shownLine(plan.note)})` : ''}`,
          },
        });
      } catch (err) {
        say(errText(err).split('\n')[0] ?? '');
      }
    },
    land(jobId) {
      try {
        if (!deps.repoRoot)
          throw new UserError('landing needs the dashboard to run inside the job’s repository');
        const r = (deps.spawnLand ?? spawnDetachedLand)(jobId, deps.repoRoot, deps.state.dir);
        say(`landing ${shortJobId(jobId)} in the background (pid ${r.pid}); its card shows how it goes`);
      } catch (err) {
        say(errText(err));
      }
    },
    async createTodo() {
      const form = dash.getState().nav.form;
      const repo = backlogRepo();
      dash.getState().dispatch({ type: 'formCancel' });
      if (!form || !repo) return;
      try {
        const t = await deps.state.todos.create(repo.slug, formTodo(form));
        say(`todo ${t.id} created (s starts it now; R runs the backlog)`);
      } catch (err) {
        say(`${errText(err)} Nothing was created.`);
      }
      changed();
    },
    startTodo(todoId) {
      const repo = backlogRepo();
      if (!repo) return;
      try {
        const r = (deps.spawnJob ?? spawnJobDetached)(todoId, repo.root, deps.state.dir);
        say(
          `starting a job for ${todoId} in the background (pid ${r.pid}); its card appears when it claims the todo`,
        );
      } catch (err) {
        say(errText(err));
      }
    },
    async closeTodo(todoId) {
      const repo = backlogRepo();
      if (!repo) return;
      try {
        const t = await deps.state.todos.close(repo.slug, todoId);
        say(`todo ${t.id} closed; ii todo reopen ${t.id} opens it again`);
      } catch (err) {
        say(errText(err));
      }
      changed();
    },
    async editTodo(todoId) {
      const repo = backlogRepo();
      if (!repo) return;
      if (!deps.suspend) return say('e needs the dashboard in a terminal: use ii todo edit');
      const todo = await deps.state.todos.get(repo.slug, todoId);
      if (!todo) return say(`todo ${todoId} is gone`);
      await editInEditor(repo.slug, todo, deps.suspend);
    },
    toggleRunner() {
      const repo = backlogRepo();
      if (!repo) return;
      const r = dash.getState().runner;
      // Slots are per machine: with runners only on other machines, R adds this one's.
      if (r?.localPids.length) {
        return dash.getState().dispatch({
          type: 'confirm',
          confirm: {
            kind: 'stopRunner',
            id: repo.slug,
            prompt: `Stop the backlog runner (pid ${r.localPids.join(', ')})? It starts no more jobs; the running ones go on.`,
          },
        });
      }
      void (async () => {
        try {
          const slots = (await repoConfig(repo.root)).run.jobs;
          const p = (deps.spawnRunner ?? spawnRunnerDetached)(slots, repo.root, deps.state.dir);
          const also = r ? ', beside the runners on other machines' : '';
          say(
            `backlog runner started with ${slots} slot${slots === 1 ? '' : 's'} (pid ${p.pid})${also}; + and - change them`,
          );
        } catch (err) {
          say(errText(err));
        }
      })();
    },
    stopRunner() {
      const r = dash.getState().runner;
      if (!r) return say('no backlog runner runs');
      for (const pid of r.localPids)
        try {
          (deps.stopRunner ?? ((p: number) => process.kill(p, 'SIGINT')))(pid);
        } catch (err) {
          say(errText(err));
          return;
        }
      say('backlog runner stopping: it starts no more jobs; the running ones go on');
    },
    async changeSlots(delta) {
      const r = dash.getState().runner;
      if (!r) return say('no backlog runner runs: R starts one');
      // A key pressed before the last change is read back builds on that change.
      const base = slotWrites.pending > 0 ? slotWrites.slots : r.slots;
      const slots = Math.max(1, base + delta);
      if (slots === base) return say('the runner keeps at least 1 slot (R stops it)');
      slotWrites.pending++;
      slotWrites.slots = slots;
      // One after another, in the order of the keys: the last one pressed is what stays.
      const write = (slotWrites.last = slotWrites.last.then(async () => {
        try {
          for (const id of r.ids) await deps.state.runners.setSlots(id, slots);
          const where = r.localPids.length ? '' : ' on each other machine (none runs here)';
          say(
            `runner slots: ${slots}${where}${delta < 0 ? ' (running jobs go on; no new one starts until fewer run)' : ''}`,
          );
        } catch (err) {
          say(errText(err));
        }
      }));
      await write;
      slotWrites.pending--;
      changed();
    },
    async loadDiff(jobId, change, iteration, from) {
      const key = diffKey(jobId, change, iteration, from);
      if (dash.getState().diffs[key]) return;
      const job = await deps.state.jobs.get(jobId);
      if (!job) return;
      let loaded: LoadedIterationDiff | null = null;
      let error: string | null = null;
      try {
        const ref: IterationRef = from
          ? locateIterationPair(job, iterationLabel(from), iterationLabel({ change, iteration }))
          : locateIteration(job, change, iteration);
        const dirs = [job.workspace_path, deps.repoRoot].filter((p): p is string => !!p);
        // Diffs read only (the user's checkout may keep its git dir apart): no link to check.
        const vcs = deps.vcs ?? new GitVcs({ checkLinks: false });
        // A job run on another machine: its refs come from the shared remote first (as ii job diff).
        const root = deps.repoRoot;
        if (root && vcs.missingCommits && vcs.fetchChangeRefs)
          await fetchJobCommits(
            vcs as Pick<Vcs, 'missingCommits' | 'fetchChangeRefs'>,
            root,
            job,
            [ref.fromCommit, ref.commit.commit_id],
            async () => jobFetchRemote(await repoConfig(root), job, root),
          );
        loaded = await loadIterationDiff(vcs, job, ref, dirs);
      } catch (err) {
        error = errText(err).split('\n')[0] ?? 'unavailable';
      }
      dash.getState().setDiff(key, { loaded, error });
    },
    async loadRecord(jobId) {
      const job = await deps.state.jobs.get(jobId);
      if (!job) return;
      // A shared store holds the whole log of a job whose files are not here (another machine's).
      const stored =
        deps.state.driver === 'postgres' && logIsElsewhere(deps.state.dir, job)
          ? await readStoredLog(deps.state.logs, job.id)
          : null;
      dash.getState().setRecord(jobId, readJobRecord(deps.state.dir, job, stored));
    },
    async answer(jobId, askId, answer, note) {
      const order = waitingJobs(dash.getState().jobs).filter(stillOpen);
      const at = order.findIndex((j) => j.id === jobId);
      let said: string;
      try {
        // The request as the store has it now: it may have timed out, or been answered elsewhere.
        const job = await deps.state.jobs.get(jobId);
        const ask = job ? openAsk(job) : null;
        if (!ask || ask.id !== askId)
          said = `job ${shortJobId(jobId)} no longer waits for this answer (answered elsewhere, timed out or ended): nothing sent`;
        else {
          await (deps.answerAsk ?? answerAsk)({
            store: deps.state,
            jobId,
            askId,
            answer,
            ...(note ? { note } : {}),
          });
          answered.add(`${jobId}:${askId}`);
          said = `${ANSWERED[answer]}: job ${shortJobId(jobId)} goes on`;
        }
      } catch (err) {
        said = errText(err).split('\n')[0] ?? 'the answer failed';
      }
      // The inbox: the next job that waits (after this one, else from the top).
      const rest = order.filter((j) => j.id !== jobId && stillOpen(j));
      const next = rest.find((j) => order.indexOf(j) > at) ?? rest[0];
      if (next) {
        dash.getState().dispatch({ type: 'selectJob', jobId: next.id });
        say(`${said} · next: job ${shortJobId(next.id)} (${count(rest.length, 'job')} waiting)`);
      } else {
        dash.getState().dispatch({ type: 'closeOverlay' });
        say(`${said} · no other job waits for you`);
      }
      // The reload after the frame that shows the next question, not before
      // it: it reads the changed jobs' logs too, which a person answering one
      // job after another should not wait for.
      setImmediate(changed);
    },
    key(input, key) {
      for (const [i, k] of keyPresses(input, key))
        for (const intent of keyIntents(dash.getState(), i, k, facts)) carryOut(intent);
    },
  };

  /** What the key handler reads beyond the board's state. */
  const facts: KeyFacts = {
    inRepo: !!deps.repoRoot,
    todoOf: (job) => deps.read?.todos.get(job.repo, job.todo_id) ?? undefined,
    todoAfterAbandon,
  };

  /**
   * An action runs on after its key: a failure it did not say itself (the
   * store unreachable, a read that threw) is said on the board, not thrown
   * where nothing hears it (an unhandled rejection closes the board).
   */
  function heard(p: unknown): void {
    if (!(p instanceof Promise)) return;
    const said = p.catch((err: unknown) => say(errText(err).split('\n')[0] || 'that failed'));
    deps.track?.(said);
  }

  /** Carries out what a key asked for (view/key-intent.ts decides what that is). */
  function carryOut(i: Intent): void {
    const s = dash.getState();
    switch (i.type) {
      case 'nav':
        return s.dispatch(i.action);
      case 'say':
        return s.setMessage(i.text);
      case 'abandon':
        return heard(actions.abandon(i.jobId, i.closeTodo ? { closeTodo: true } : {}));
      case 'retry':
        return heard(actions.retry(i.jobId));
      case 'askLand':
        return heard(actions.askLand(i.jobId));
      case 'land':
        return heard(actions.land(i.jobId));
      case 'createTodo':
        return heard(actions.createTodo());
      case 'startTodo':
        return heard(actions.startTodo(i.todoId));
      case 'closeTodo':
        return heard(actions.closeTodo(i.todoId));
      case 'editTodo':
        return heard(actions.editTodo(i.todoId));
      case 'toggleRunner':
        return heard(actions.toggleRunner());
      case 'stopRunner':
        return heard(actions.stopRunner());
      case 'changeSlots':
        return heard(actions.changeSlots(i.delta));
      case 'loadDiff':
        return heard(actions.loadDiff(i.jobId, i.change, i.iteration, i.from));
      case 'loadRecord':
        return heard(actions.loadRecord(i.jobId));
      case 'answer':
        return heard(actions.answer(i.jobId, i.askId, i.answer, i.note));
      case 'quit':
        return deps.quit();
      default: {
        // A new intent fails to compile here until it is carried out.
        const unhandled: never = i;
        throw new Error(`no handler for ${JSON.stringify(unhandled)}`);
      }
    }
  }

  /**
   * What abandoning `job` does to its todo, for the question: the backlog's
   * rule (model/backlog.ts) applied as if the job had ended, under the
   * repository's live runners, which start the todo again if it is ready.
   */
  function todoAfterAbandon(job: Job): string {
    const read = deps.read;
    if (!read) return '';
    try {
      const todos = read.todos.list(job.repo);
      const todo = todos.find((t) => t.id === job.todo_id);
      if (!todo) return '';
      const now = Date.now();
      const live = read.runners.list(job.repo).filter((r) => runnerAlive(r, now, probe));
      const briefs = read.jobs
        .briefs(job.repo)
        .map((b) => (b.id === job.id ? { ...b, status: 'abandoned' as const } : b));
      const blockers = blockersOf({ ...todo, status: 'open' }, new Map(todos.map((t) => [t.id, t])), briefs, {
        maxAttempts: deps.maxAttempts?.() ?? 2,
        isStale: (b) => isStale(b, now, probe),
        ...(runnersLand(live) ? { depsLanded: true } : {}),
      });
      return abandonFate({ todo, blockers, runner: live.length > 0 });
    } catch {
      return ''; // a busy store: the question goes without it
    }
  }

  /** Runs $EDITOR on a todo (the terminal is the editor's meanwhile) and saves what it gives back. */
  async function editInEditor(repo: string, todo: Todo, suspend: (fn: () => void) => void): Promise<void> {
    // Loaded before the board is put away: the editor runs synchronously inside suspend.
    const [{ editText }, { todoTemplate, parseTodoTemplate }] = await Promise.all([
      import('../../todo/editor.js'),
      import('../../todo/edit-template.js'),
    ]);
    suspend(() => {
      const unchanged = (err: unknown) =>
        // The editor's and the parser's words are for a new todo; this one is kept as it was.
        say(`${errText(err).replace(/:? ?nothing was created\.?/, '')}: todo ${todo.id} is unchanged`);
      let text: string;
      try {
        text = editText(
          todoTemplate(todo, `# Editing todo ${todo.id}. Lines starting with # are ignored.`),
          `todo-${todo.id}.md`,
        );
      } catch (err) {
        unchanged(err);
        return changed();
      }
      // Saved once the board is back: the store's write is asynchronous, the editor was not.
      void (async () => {
        try {
          await deps.state.todos.update(repo, todo.id, parseTodoTemplate(text));
          say(`todo ${todo.id} saved`);
        } catch (err) {
          unchanged(err);
        }
        changed();
      })();
    });
  }

  return actions;
}
