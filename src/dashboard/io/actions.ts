// What the dashboard's keys do beyond moving: abandon, retry, loading a code
// diff, and the dispatcher that maps a key press through the keymap.
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
import { blockerWords, selectedTodo } from '../view/board.js';
import { formError, formTodo, FIELD_PROMPTS } from '../view/todo-form.js';
import type { Todo } from '../../model/todo.js';
import type { Job } from '../../model/job.js';
import { blockersOf } from '../../model/backlog.js';
import { runnerAlive, runnersLand } from '../../model/runner.js';
import { abandonFate, retryFate, retryRefusal } from '../view/todo-fate.js';
import { landable, landPlan } from '../../job/land-plan.js';
import { count } from '../view/count.js';
import { shownLine } from '../../text/shown.js';
import { localProbe } from '../../proc/alive.js';
import type { StateStore } from '../../state/api.js';
import { GitVcs } from '../../vcs/git.js';
import type { Vcs } from '../../vcs/vcs.js';
import type { Actions } from '../view/actions-api.js';
import { selectedJob } from '../view/board.js';
import { alwaysCovers, openAsk, waitingJobs } from '../view/needs-you.js';
import type { AskAnswer, PermissionAsk } from '../../model/permission-ask.js';
import { answerAsk } from '../../job/answer.js';
import { diffRequest, diffTarget } from '../view/diff-request.js';
import type { LogMove } from '../view/log-view.js';
import { readJobRecord } from './record.js';
import { bindingFor, keyName, modeOf, type ActionName, type KeyPress } from '../view/keymap.js';
import { diffKey, iterationLabel, type Confirm } from '../view/state.js';
import type { DashboardStore } from '../view/store.js';

export interface ActionDeps {
  state: StateStore;
  dash: DashboardStore;
  /** The repository the dashboard runs in (retries start there); null outside one. */
  repoRoot: string | null;
  probe?: StaleProbe;
  /** Reads iteration diffs; a GitVcs by default. */
  vcs?: Pick<Vcs, 'changedFiles' | 'diff'>;
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
  /** [run] max-attempts as the board knows it (what the abandon question counts); 2 until read. */
  maxAttempts?: () => number;
  /** Records a person's answer for the waiting job's runner; answerAsk (src/job/answer.ts) by default. */
  answerAsk?: (o: { store: StateStore; jobId: string; answer: AskAnswer; note?: string }) => PermissionAsk;
  /** Called after something the sync should pick up at once (the store changed in this process). */
  onChanged?: () => void;
  quit: () => void;
}

/** A key press with no named key or modifier: printable text (or several keys in one read). */
const isPlainText = (k: KeyPress): boolean =>
  !(
    k.upArrow ||
    k.downArrow ||
    k.leftArrow ||
    k.rightArrow ||
    k.pageUp ||
    k.pageDown ||
    k.return ||
    k.escape ||
    k.backspace ||
    k.delete ||
    k.ctrl ||
    k.meta
  );

/** The pager keys' moves in the log. */
const LOG_MOVES: Record<'scrollUp' | 'scrollDown' | 'pageUp' | 'pageDown' | 'top' | 'end', LogMove> = {
  scrollUp: 'up',
  scrollDown: 'down',
  pageUp: 'pageUp',
  pageDown: 'pageDown',
  top: 'top',
  end: 'end',
};

const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The repository's config, loaded when a key needs it (it brings zod, which the board's start does without). */
async function repoConfig(root: string) {
  const { loadConfig } = await import('../../job/config.js');
  return loadConfig(root);
}

/** What a "no" to each question says. */
const NOTHING_DONE: Record<Confirm['kind'], string> = {
  abandon: 'nothing abandoned',
  retry: 'nothing retried',
  land: 'nothing landed',
  start: 'nothing started',
  closeTodo: 'nothing closed',
  stopRunner: 'the runner goes on',
  allowAlways: 'nothing answered: the job still waits',
};

/** What each answer did, for the status bar. */
const ANSWERED: Record<AskAnswer, string> = {
  allow: 'allowed once',
  'allow-always': 'allowed always (for this job)',
  reject: 'rejected',
};

/** The default session release of a stale job: session failed, workspace freed, todo reopened. */
export function releaseSession(state: StateStore): (sessionId: string) => Promise<void> {
  return async (sessionId) => {
    const s = state.sessions.get(sessionId);
    if (!s) return;
    if (s.status === 'active') state.sessions.setStatus(sessionId, 'failed');
    // Only while it is still this session's: another may have claimed it since.
    const ws = state.workspaces.list(s.repo).find((w) => w.path === s.workspace_path);
    if (ws?.session_id === sessionId) state.workspaces.release(ws.path);
    if (state.todos.get(s.repo, s.todo_id)?.status === 'in_progress')
      state.todos.setStatus(s.repo, s.todo_id, 'open');
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

export function createActions(d: ActionDeps): Actions {
  const probe = d.probe ?? localProbe;
  const dash = d.dash;
  const say = (m: string) => dash.getState().setMessage(m);
  /** The repository the board shows, for what acts on its backlog; says why not when there is none. */
  const backlogRepo = (): { slug: string; root: string } | null => {
    const slug = dash.getState().repo;
    if (slug && d.repoRoot) return { slug, root: d.repoRoot };
    say('the backlog is a repository’s: run ii dashboard inside one (not --all)');
    return null;
  };
  const changed = () => d.onChanged?.();
  /** Requests answered from this board, until the sync shows them answered: the inbox skips them. */
  const answered = new Set<string>();
  const stillOpen = (j: Job) => {
    const a = openAsk(j);
    return !!a && !answered.has(`${j.id}:${a.id}`);
  };

  const actions: Actions = {
    async abandon(jobId, o = {}) {
      const job = d.state.jobs.get(jobId);
      if (!job) return say(`job ${jobId} is gone`);
      try {
        const r = await abandonJob(d.state, d.state.dir, job, {
          reason: `abandoned from the dashboard${o.closeTodo ? ', its todo closed' : ''}`,
          probe,
          finishSession: d.finishSession ?? releaseSession(d.state),
          ...(o.closeTodo ? { closeTodo: true } : {}),
        });
        const closed = o.closeTodo
          ? `; todo ${job.todo_id} closed (ii todo reopen ${job.todo_id} brings it back)`
          : '';
        say(
          r.kind === 'requested'
            ? `abandon requested for ${jobId.slice(0, 7)}; its runner stops it${closed}`
            : `abandoned stale job ${jobId.slice(0, 7)}: ${describeCleanup(r.cleanup)}${closed}`,
        );
      } catch (err) {
        say(errText(err));
      }
      d.onChanged?.();
    },
    retry(jobId) {
      const job = d.state.jobs.get(jobId);
      if (!job) return say(`job ${jobId} is gone`);
      try {
        const stale = isStale(job, Date.now(), probe);
        assertRetryable(job, stale);
        if (!d.repoRoot) throw new UserError('retry needs the dashboard to run inside the job’s repository');
        const r = (d.spawnRetry ?? spawnDetachedRetry)(jobId, d.repoRoot, d.state.dir);
        say(
          `retrying ${jobId.slice(0, 7)} in the background (pid ${r.pid})${stale && job.status === 'active' ? '; the stale job is ended first (failed: runner gone)' : ''}; its card appears when it starts`,
        );
      } catch (err) {
        say(errText(err));
      }
    },
    async askLand(jobId) {
      const job = d.state.jobs.get(jobId);
      if (!job) return say(`job ${jobId} is gone`);
      try {
        landable(job);
        if (!d.repoRoot)
          throw new UserError('landing needs the dashboard to run inside the job’s repository');
        const repo = { root: d.repoRoot, slug: job.repo };
        const plan = await landPlan({ repo, config: await repoConfig(d.repoRoot), job });
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
            prompt: `Land job ${jobId.slice(0, 7)} on ${shownLine(plan.onto)}: ${count(plan.subjects.length, 'commit')} (${subjects}${more}), ${tests}?${plan.note ? ` (${shownLine(plan.note)})` : ''}`,
          },
        });
      } catch (err) {
        say(errText(err).split('\n')[0] ?? '');
      }
    },
    land(jobId) {
      try {
        if (!d.repoRoot)
          throw new UserError('landing needs the dashboard to run inside the job’s repository');
        const r = (d.spawnLand ?? spawnDetachedLand)(jobId, d.repoRoot, d.state.dir);
        say(`landing ${jobId.slice(0, 7)} in the background (pid ${r.pid}); its card shows how it goes`);
      } catch (err) {
        say(errText(err));
      }
    },
    createTodo() {
      const form = dash.getState().nav.form;
      const repo = backlogRepo();
      dash.getState().dispatch({ type: 'formCancel' });
      if (!form || !repo) return;
      try {
        const t = d.state.todos.create(repo.slug, formTodo(form));
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
        const r = (d.spawnJob ?? spawnJobDetached)(todoId, repo.root, d.state.dir);
        say(
          `starting a job for ${todoId} in the background (pid ${r.pid}); its card appears when it claims the todo`,
        );
      } catch (err) {
        say(errText(err));
      }
    },
    closeTodo(todoId) {
      const repo = backlogRepo();
      if (!repo) return;
      try {
        const t = d.state.todos.close(repo.slug, todoId);
        say(`todo ${t.id} closed; ii todo reopen ${t.id} opens it again`);
      } catch (err) {
        say(errText(err));
      }
      changed();
    },
    editTodo(todoId) {
      const repo = backlogRepo();
      if (!repo) return;
      if (!d.suspend) return say('e needs the dashboard in a terminal: use ii todo edit');
      const todo = d.state.todos.get(repo.slug, todoId);
      if (!todo) return say(`todo ${todoId} is gone`);
      void editInEditor(repo.slug, todo, d.suspend);
    },
    toggleRunner() {
      const repo = backlogRepo();
      if (!repo) return;
      const r = dash.getState().runner;
      if (r) {
        if (!r.localPids.length)
          return say('the backlog runner runs on another machine: stop it there (Ctrl-C in its terminal)');
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
          const p = (d.spawnRunner ?? spawnRunnerDetached)(slots, repo.root, d.state.dir);
          say(
            `backlog runner started with ${slots} slot${slots === 1 ? '' : 's'} (pid ${p.pid}); + and - change them`,
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
          (d.stopRunner ?? ((p: number) => process.kill(p, 'SIGINT')))(pid);
        } catch (err) {
          say(errText(err));
          return;
        }
      say('backlog runner stopping: it starts no more jobs; the running ones go on');
    },
    changeSlots(delta) {
      const r = dash.getState().runner;
      if (!r) return say('no backlog runner runs: R starts one');
      const slots = Math.max(1, r.slots + delta);
      if (slots === r.slots) return say('the runner keeps at least 1 slot (R stops it)');
      try {
        for (const id of r.ids) d.state.runners.setSlots(id, slots);
        say(
          `runner slots: ${slots}${delta < 0 ? ' (running jobs go on; no new one starts until fewer run)' : ''}`,
        );
      } catch (err) {
        say(errText(err));
      }
      changed();
    },
    async loadDiff(jobId, change, iteration, from) {
      const key = diffKey(jobId, change, iteration, from);
      if (dash.getState().diffs[key]) return;
      const job = d.state.jobs.get(jobId);
      if (!job) return;
      let loaded: LoadedIterationDiff | null = null;
      let error: string | null = null;
      try {
        const ref: IterationRef = from
          ? locateIterationPair(job, iterationLabel(from), iterationLabel({ change, iteration }))
          : locateIteration(job, change, iteration);
        const dirs = [job.workspace_path, d.repoRoot].filter((p): p is string => !!p);
        // Diffs read only (the user's checkout may keep its git dir apart): no link to check.
        loaded = await loadIterationDiff(d.vcs ?? new GitVcs({ checkLinks: false }), job, ref, dirs);
      } catch (err) {
        error = errText(err).split('\n')[0] ?? 'unavailable';
      }
      dash.getState().setDiff(key, { loaded, error });
    },
    loadRecord(jobId) {
      const job = d.state.jobs.get(jobId);
      if (job) dash.getState().setRecord(jobId, readJobRecord(d.state.dir, job));
    },
    answer(jobId, askId, answer, note) {
      const order = waitingJobs(dash.getState().jobs).filter(stillOpen);
      const at = order.findIndex((j) => j.id === jobId);
      let said: string;
      try {
        // The request as the store has it now: it may have timed out, or been answered elsewhere.
        const job = d.state.jobs.get(jobId);
        const ask = job ? openAsk(job) : null;
        if (!ask || ask.id !== askId)
          said = `job ${jobId.slice(0, 7)} no longer waits for this answer (answered elsewhere, timed out or ended): nothing sent`;
        else {
          (d.answerAsk ?? answerAsk)({ store: d.state, jobId, answer, ...(note ? { note } : {}) });
          answered.add(`${jobId}:${askId}`);
          said = `${ANSWERED[answer]}: job ${jobId.slice(0, 7)} goes on`;
        }
      } catch (err) {
        said = errText(err).split('\n')[0] ?? 'the answer failed';
      }
      // The inbox: the next job that waits (after this one, else from the top).
      const rest = order.filter((j) => j.id !== jobId && stillOpen(j));
      const next = rest.find((j) => order.indexOf(j) > at) ?? rest[0];
      if (next) {
        dash.getState().dispatch({ type: 'selectJob', jobId: next.id });
        say(`${said} · next: job ${next.id.slice(0, 7)} (${count(rest.length, 'job')} waiting)`);
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
      // Keys that arrive in one read (typed fast, held down, or on a busy
      // machine) reach us as one string, which no binding matches: they were
      // lost. Take them one by one, as if typed one at a time.
      if (input.length > 1 && isPlainText(key)) {
        for (const ch of input) actions.key(ch, ch === '\r' ? { return: true } : {});
        return;
      }
      const s = dash.getState();
      // A message stays until the next key, then the key hints come back.
      if (s.message) s.setMessage(null);
      const mode = modeOf(s);
      const b = bindingFor(mode, keyName(input, key), s.nav.level, s.nav.confirm?.kind);
      if (!b) {
        if (mode === 'filter' && input && !key.ctrl && !key.meta)
          s.dispatch({ type: 'filterInput', text: input });
        if (mode === 'form' && input && !key.ctrl && !key.meta)
          s.dispatch({ type: 'formInput', text: input });
        if (mode === 'note' && input && !key.ctrl && !key.meta)
          s.dispatch({ type: 'noteInput', text: input });
        return;
      }
      perform(b.action);
    },
  };

  function perform(a: ActionName): void {
    const s = dash.getState();
    const page = 10;
    switch (a) {
      case 'up':
      case 'down':
      case 'left':
      case 'right':
        return s.dispatch({ type: 'move', dir: a });
      case 'drill': {
        s.dispatch({ type: 'drill' });
        const next = dash.getState();
        if (next.nav.level === 'detail') {
          const t = diffTarget(next);
          if (t) {
            actions.loadRecord(t.job.id);
            void actions.loadDiff(t.job.id, t.change, t.iteration);
          }
        }
        return;
      }
      case 'back':
        return s.dispatch({ type: 'back' });
      case 'abandon': {
        const job = selectedJob(s);
        if (!job) return s.setMessage('no job selected');
        if (job.status !== 'active')
          return s.setMessage(`job ${job.id.slice(0, 7)} is already ${job.status}`);
        const stale = s.stale[job.id] ? ' (its runner is gone: it is cleaned up here)' : '';
        return s.dispatch({
          type: 'confirm',
          confirm: {
            kind: 'abandon',
            id: job.id,
            prompt: `Abandon job ${job.id.slice(0, 7)}${stale}? ${todoAfterAbandon(job)}`.trimEnd(),
          },
        });
      }
      case 'abandonClose': {
        const c = s.nav.confirm;
        s.dispatch({ type: 'closeConfirm' });
        if (c?.kind === 'abandon') void actions.abandon(c.id, { closeTodo: true });
        return;
      }
      case 'yes': {
        const c = s.nav.confirm;
        s.dispatch({ type: 'closeConfirm' });
        if (c?.kind === 'abandon') void actions.abandon(c.id);
        if (c?.kind === 'retry') actions.retry(c.id);
        if (c?.kind === 'land') actions.land(c.id);
        if (c?.kind === 'start') actions.startTodo(c.id);
        if (c?.kind === 'closeTodo') actions.closeTodo(c.id);
        if (c?.kind === 'stopRunner') actions.stopRunner();
        if (c?.kind === 'allowAlways' && c.askId != null) actions.answer(c.id, c.askId, 'allow-always');
        return;
      }
      case 'allowOnce':
      case 'allowAlways':
      case 'rejectAsk': {
        const job = selectedJob(s);
        const ask = job ? openAsk(job) : null;
        if (!job || !ask) return s.setMessage('this job does not wait for you now (esc closes)');
        if (a === 'allowOnce') return actions.answer(job.id, ask.id, 'allow');
        if (a === 'rejectAsk') {
          s.dispatch({ type: 'noteStart', jobId: job.id, askId: ask.id });
          return s.setMessage(
            'a note for the agent: why, or what to do instead (enter sends, esc goes back)',
          );
        }
        // What "always" covers is said before it is given.
        return s.dispatch({
          type: 'confirm',
          confirm: {
            kind: 'allowAlways',
            id: job.id,
            askId: ask.id,
            prompt: `${alwaysCovers(ask)} Allow always?`,
          },
        });
      }
      case 'noteAccept': {
        const n = s.nav.note;
        s.dispatch({ type: 'noteCancel' });
        if (n) actions.answer(n.jobId, n.askId, 'reject', n.text.trim() || undefined);
        return;
      }
      case 'noteCancel':
        s.dispatch({ type: 'noteCancel' });
        return s.setMessage('nothing sent: the job still waits');
      case 'noteBackspace':
        return s.dispatch({ type: 'noteBackspace' });
      case 'no': {
        const kind = s.nav.confirm?.kind;
        s.dispatch({ type: 'closeConfirm' });
        return s.setMessage(NOTHING_DONE[kind ?? 'abandon']);
      }
      case 'newTodo':
        if (!backlogRepo()) return;
        s.dispatch({ type: 'formStart' });
        return s.setMessage(`new todo · ${FIELD_PROMPTS.title}`);
      case 'formNext': {
        const f = s.nav.form;
        if (!f) return;
        const why = formError(f.field, f.text);
        if (why) return s.setMessage(why);
        if (f.field === 'description') {
          s.dispatch({ type: 'formNext' });
          return actions.createTodo();
        }
        s.dispatch({ type: 'formNext' });
        const next = dash.getState().nav.form;
        return s.setMessage(next ? `new todo · ${FIELD_PROMPTS[next.field]}` : null);
      }
      case 'formBackspace':
        return s.dispatch({ type: 'formBackspace' });
      case 'formCancel':
        s.dispatch({ type: 'formCancel' });
        return s.setMessage('nothing created');
      case 'start': {
        const todo = selectedTodo(s);
        if (!todo) return s.setMessage('s starts a todo: select one in the Backlog column');
        const blocked = s.backlog.blocked.find((b) => b.todo.id === todo.id);
        if (!blocked) return actions.startTodo(todo.id);
        return s.dispatch({
          type: 'confirm',
          confirm: {
            kind: 'start',
            id: todo.id,
            prompt: `Todo ${todo.id} is blocked (${blocked.blockers.map(blockerWords).join('; ')}): start a job for it anyway?`,
          },
        });
      }
      case 'closeTodo': {
        const todo = selectedTodo(s);
        if (!todo) return s.setMessage('x closes a todo: select one in the Backlog column');
        return s.dispatch({
          type: 'confirm',
          confirm: {
            kind: 'closeTodo',
            id: todo.id,
            prompt: `Close todo ${todo.id} “${shownLine(todo.title)}”? It will not run (ii todo reopen ${todo.id} brings it back).`,
          },
        });
      }
      case 'editTodo': {
        const todo = selectedTodo(s);
        if (!todo) return s.setMessage('e edits a todo: select one in the Backlog column');
        return actions.editTodo(todo.id);
      }
      case 'runner':
        return actions.toggleRunner();
      case 'slotsUp':
      case 'slotsDown':
        return actions.changeSlots(a === 'slotsUp' ? 1 : -1);
      case 'land': {
        const job = selectedJob(s);
        if (!job) return s.setMessage('no job selected');
        return void actions.askLand(job.id);
      }
      case 'retry': {
        const job = selectedJob(s);
        if (!job) return s.setMessage('no job selected');
        // A running job is refused at once (retry says why); anything else starts a new job, so it asks first.
        if (job.status === 'active' && !s.stale[job.id]) return actions.retry(job.id);
        const todo = d.state.todos.get(job.repo, job.todo_id) ?? undefined;
        const refused = retryRefusal(todo, job.todo_id);
        if (refused) return s.setMessage(refused);
        const fate = todo ? retryFate(todo) : null;
        return s.dispatch({
          type: 'confirm',
          confirm: {
            kind: 'retry',
            id: job.id,
            prompt: `Retry job ${job.id.slice(0, 7)} as a new job${s.stale[job.id] ? ' (the stale one is ended first)' : ''}?${fate ? ` ${fate}` : ''}`,
          },
        });
      }
      case 'logs': {
        const job = selectedJob(s);
        if (!job) return s.setMessage('no job selected');
        actions.loadRecord(job.id);
        return s.dispatch({ type: 'overlay', overlay: 'logs' });
      }
      case 'output':
        return s.dispatch({ type: 'toggleOutput' });
      case 'files':
        if (!selectedJob(s)) return s.setMessage('no job selected');
        return s.dispatch({ type: 'overlay', overlay: 'files' });
      case 'diff': {
        const t = diffRequest(s);
        if (!t) return s.setMessage('no iteration to diff yet');
        const m = s.nav.mark;
        if (m && m.jobId === t.job.id && !t.from)
          return s.setMessage(
            `${iterationLabel(m)} is the marked iteration: move to another one, then d diffs it against ${iterationLabel(m)}`,
          );
        void actions.loadDiff(t.job.id, t.change, t.iteration, t.from);
        return s.dispatch({ type: 'overlay', overlay: 'diff' });
      }
      case 'mark': {
        if (s.nav.level !== 'commits' && s.nav.level !== 'detail')
          return s.setMessage('m marks an iteration: enter a job, then a change, to reach its iterations');
        const t = diffTarget(s);
        if (!t) return s.setMessage('no iteration to mark yet');
        const m = s.nav.mark;
        if (m && m.jobId === t.job.id && m.change === t.change && m.iteration === t.iteration) {
          s.dispatch({ type: 'mark', mark: null });
          return s.setMessage(`mark on ${iterationLabel(m)} cleared`);
        }
        return s.dispatch({
          type: 'mark',
          mark: { jobId: t.job.id, change: t.change, iteration: t.iteration },
        });
      }
      case 'prevChange':
      case 'nextChange': {
        if (s.nav.level !== 'commits')
          return s.setMessage("[ and ] step between changes on a change's iterations board");
        const before = s.nav.change;
        s.dispatch({ type: 'changeStep', delta: a === 'prevChange' ? -1 : 1 });
        if (dash.getState().nav.change === before)
          return s.setMessage(a === 'prevChange' ? 'this is the first change' : 'this is the last change');
        return;
      }
      case 'help':
        return s.dispatch({ type: 'overlay', overlay: 'help' });
      case 'close':
        return s.dispatch({ type: 'closeOverlay' });
      case 'filter':
        return s.dispatch({ type: 'filterStart' });
      case 'filterAccept':
        return s.dispatch({ type: 'filterAccept' });
      case 'filterCancel':
        return s.dispatch({ type: 'filterCancel' });
      case 'filterBackspace':
        return s.dispatch({ type: 'filterBackspace' });
      case 'finished':
        return s.dispatch({ type: 'toggleFinished' });
      case 'scrollUp':
      case 'scrollDown':
      case 'pageUp':
      case 'pageDown':
      case 'top':
      case 'end': {
        // The log pages by its rows as drawn (a pager's keys); the other views by lines.
        if (s.nav.overlay === 'logs') return s.dispatch({ type: 'logScroll', to: LOG_MOVES[a] });
        if (a === 'end') return s.setMessage('G goes to the end of the log (l)');
        const delta = { scrollUp: -1, scrollDown: 1, pageUp: -page, pageDown: page, top: -s.nav.scroll }[a];
        return s.dispatch({ type: 'scroll', delta });
      }
      case 'quit':
        return d.quit();
      default: {
        // A new action in the keymap fails to compile here until it has a handler.
        const unhandled: never = a;
        throw new Error(`no handler for ${String(unhandled)}`);
      }
    }
  }

  /**
   * What abandoning `job` does to its todo, for the question: the backlog's
   * rule (model/backlog.ts) applied as if the job had ended, under the
   * repository's live runners, which start the todo again if it is ready.
   */
  function todoAfterAbandon(job: Job): string {
    try {
      const todos = d.state.todos.list(job.repo);
      const todo = todos.find((t) => t.id === job.todo_id);
      if (!todo) return '';
      const now = Date.now();
      const live = d.state.runners.list(job.repo).filter((r) => runnerAlive(r, now, probe));
      const briefs = d.state.jobs
        .briefs(job.repo)
        .map((b) => (b.id === job.id ? { ...b, status: 'abandoned' as const } : b));
      const blockers = blockersOf({ ...todo, status: 'open' }, new Map(todos.map((t) => [t.id, t])), briefs, {
        maxAttempts: d.maxAttempts?.() ?? 2,
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
      try {
        const text = editText(
          todoTemplate(todo, `# Editing todo ${todo.id}. Lines starting with # are ignored.`),
          `todo-${todo.id}.md`,
        );
        d.state.todos.update(repo, todo.id, parseTodoTemplate(text));
        say(`todo ${todo.id} saved`);
      } catch (err) {
        // The editor's and the parser's words are for a new todo; this one is kept as it was.
        say(`${errText(err).replace(/:? ?nothing was created\.?/, '')}: todo ${todo.id} is unchanged`);
      }
      changed();
    });
  }

  return actions;
}
