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
import { loadConfig } from '../../job/config.js';
import { spawnDetachedLand } from '../../job/detached.js';
import { landable, landPlan } from '../../job/land-plan.js';
import { count } from '../view/count.js';
import { shownLine } from '../../text/shown.js';
import { localProbe } from '../../proc/alive.js';
import type { StateStore } from '../../state/api.js';
import { GitVcs } from '../../vcs/git.js';
import type { Vcs } from '../../vcs/vcs.js';
import type { Actions } from '../view/actions-api.js';
import { selectedJob } from '../view/board.js';
import { diffRequest, diffTarget } from '../view/diff-request.js';
import { readJobRecord } from './record.js';
import { bindingFor, keyName, modeOf, type ActionName, type KeyPress } from '../view/keymap.js';
import { diffKey, iterationLabel } from '../view/state.js';
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

const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

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

export function createActions(d: ActionDeps): Actions {
  const probe = d.probe ?? localProbe;
  const dash = d.dash;
  const say = (m: string) => dash.getState().setMessage(m);

  const actions: Actions = {
    async abandon(jobId) {
      const job = d.state.jobs.get(jobId);
      if (!job) return say(`job ${jobId} is gone`);
      try {
        const r = await abandonJob(d.state, d.state.dir, job, {
          reason: 'abandoned from the dashboard',
          probe,
          finishSession: d.finishSession ?? releaseSession(d.state),
        });
        say(
          r.kind === 'requested'
            ? `abandon requested for ${jobId.slice(0, 7)}; its runner stops it`
            : `abandoned stale job ${jobId.slice(0, 7)}: ${describeCleanup(r.cleanup)}`,
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
        const plan = await landPlan({ repo, config: loadConfig(d.repoRoot), job });
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
            jobId,
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
        loaded = await loadIterationDiff(d.vcs ?? new GitVcs(), job, ref, dirs);
      } catch (err) {
        error = errText(err).split('\n')[0] ?? 'unavailable';
      }
      dash.getState().setDiff(key, { loaded, error });
    },
    loadRecord(jobId) {
      const job = d.state.jobs.get(jobId);
      if (job) dash.getState().setRecord(jobId, readJobRecord(d.state.dir, job));
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
      const b = bindingFor(mode, keyName(input, key), s.nav.level);
      if (!b) {
        if (mode === 'filter' && input && !key.ctrl && !key.meta)
          s.dispatch({ type: 'filterInput', text: input });
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
          confirm: { kind: 'abandon', jobId: job.id, prompt: `Abandon job ${job.id.slice(0, 7)}${stale}?` },
        });
      }
      case 'yes': {
        const c = s.nav.confirm;
        s.dispatch({ type: 'closeConfirm' });
        if (c?.kind === 'abandon') void actions.abandon(c.jobId);
        if (c?.kind === 'retry') actions.retry(c.jobId);
        if (c?.kind === 'land') actions.land(c.jobId);
        return;
      }
      case 'no': {
        const kind = s.nav.confirm?.kind;
        s.dispatch({ type: 'closeConfirm' });
        return s.setMessage(
          kind === 'retry' ? 'nothing retried' : kind === 'land' ? 'nothing landed' : 'nothing abandoned',
        );
      }
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
        return s.dispatch({
          type: 'confirm',
          confirm: {
            kind: 'retry',
            jobId: job.id,
            prompt: `Retry job ${job.id.slice(0, 7)} as a new job${s.stale[job.id] ? ' (the stale one is ended first)' : ''}?`,
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
        return s.dispatch({ type: 'scroll', delta: -1 });
      case 'scrollDown':
        return s.dispatch({ type: 'scroll', delta: 1 });
      case 'pageUp':
        return s.dispatch({ type: 'scroll', delta: -page });
      case 'pageDown':
        return s.dispatch({ type: 'scroll', delta: page });
      case 'quit':
        return d.quit();
      default: {
        // A new action in the keymap fails to compile here until it has a handler.
        const unhandled: never = a;
        throw new Error(`no handler for ${String(unhandled)}`);
      }
    }
  }

  return actions;
}
