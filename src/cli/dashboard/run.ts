// Runs the dashboard: the store and its sync, then the Ink app in the
// alternate screen. The terminal is given back clean on quit, on a crash and
// on SIGINT/SIGTERM.
import { createElement } from 'react';
import { UserError } from '../../errors.js';
import { createActions, type ActionDeps } from '../../dashboard/io/actions.js';
import type { Actions } from '../../dashboard/view/actions-api.js';
import { boardReaper, boardSettler } from '../../dashboard/io/reap.js';
import { readBanner } from './banner.js';
import { endSessionOf } from '../job/deps.js';
import { loadInProduction } from './production-env.js';
import { warmBoard } from './warm.js';
import { BOARD_STORE_OPTIONS, followBoardSize, tuneHeapForDashboard } from './heap.js';
import { createDashboardStore } from '../../dashboard/view/store.js';
import { DashboardSync } from '../../dashboard/io/sync.js';
import { AskNotifier } from '../../dashboard/io/notify.js';
import { openStateStore } from '../../state/index.js';
import { databaseUrl, openAsyncStateStore } from '../../state/open-async.js';
import { StoreMirror, type BoardSource } from '../../dashboard/io/board-source.js';
import { asyncStore } from '../../state/sync-adapter.js';
import { currentRepo, type RepoContext } from '../context.js';

/**
 * What bench/dashboard-rss.child.js builds the board from: this module is
 * the dashboard's own bundled entry (dist/cli/dashboard.js), so the bench
 * measures the memory of the code `ii dashboard` runs, Ink bundled in.
 */
export {
  BOARD_STORE_OPTIONS,
  createActions,
  createDashboardStore,
  DashboardSync,
  openStateStore,
  followBoardSize,
  tuneHeapForDashboard,
};

/** Ink and the Dashboard component, loaded when the board is drawn (their own chunk). */
export const loadView = () =>
  loadInProduction(() => Promise.all([import('ink'), import('../../../components/Dashboard.js')]));

/** How the dashboard renders (bench/dashboard.bench.js measures keypresses with the same). */
export const RENDER_OPTIONS = {
  alternateScreen: true,
  // A terminal is a terminal even under CI=true (the tmux test runs there).
  interactive: true,
  exitOnCtrlC: false,
  patchConsole: true,
  // At most this many frames of the jobs' updates a second; a keypress's
  // frame is drawn at once, past it (scripts/ink-key-frames.mjs). Streamed
  // panes do not fill it (the sync draws them 8 times a second, LIVE_DRAW_MS).
  maxFps: 60,
} as const;

/**
 * [run] max-attempts for the Backlog column; a config that cannot be read
 * leaves the default (the board still opens; ii run says what is wrong).
 */
async function maxAttemptsOf(root: string): Promise<number | undefined> {
  try {
    const { loadConfig } = await import('../../job/config.js');
    return loadConfig(root).run['max-attempts'];
  } catch {
    return undefined;
  }
}

/** The header's "agents not sandboxed: …" where [sandbox] mode = "auto" finds no sandbox, else null. */
async function sandboxBanner(root: string): Promise<string | null> {
  try {
    const { loadConfig } = await import('../../job/config.js');
    const { sandboxWarning } = await import('../../proc/sandbox/sandbox.js');
    return sandboxWarning(loadConfig(root));
  } catch {
    return null;
  }
}

/** [notify] of the config; a config that cannot be read leaves the default (the bell rings). */
async function notifyConfig(root: string) {
  try {
    const { loadConfig } = await import('../../job/config.js');
    return loadConfig(root).notify;
  } catch {
    return undefined;
  }
}

/** How long after the board is first drawn its drawing code is warmed off screen (warm.ts): it has drawn, and its first reads are done. */
const WARM_DELAY_MS = 300;

/** Leaves the alternate screen and shows the cursor: harmless when already done. */
const RESTORE = '\x1b[?1049l\x1b[?25h';
/** How long quitting waits for the actions keys started to finish writing (a shared store's write is a few round trips). */
const ACTIONS_GRACE_MS = 3000;

export async function runDashboard(opts: { all: boolean }): Promise<void> {
  if (!process.stdout.isTTY || !process.stdin.isTTY)
    throw new UserError(
      'ii dashboard needs a terminal (its input and output must be a TTY).\n' +
        'To list jobs from a script or a pipe, use: ii job list (or ii job list --json)',
    );
  let repo: RepoContext | null = null;
  try {
    repo = currentRepo();
  } catch (err) {
    if (!opts.all && !(err instanceof UserError)) throw err;
  }
  tuneHeapForDashboard();
  const scope = opts.all || !repo ? null : repo.slug;
  // On SQLite the board reads the file as it changes (io/sync.ts), with no
  // await between a write and the frame; on a shared PostgreSQL store it
  // reads a copy in memory that LISTEN/NOTIFY keeps up to date
  // (io/board-source.ts), and the logs of other machines' jobs from the store.
  // Its actions and cleanups write through the asynchronous API either way.
  const shared = databaseUrl() !== null;
  const state = shared ? null : openStateStore(BOARD_STORE_OPTIONS);
  const store = state ? asyncStore(state) : await openAsyncStateStore();
  // The events the board's own writes append (an abandon, a dead runner's
  // cleanup) go to the shared store's copy of the job's log too; closed
  // before the store is.
  const shipping = shared ? (await import('../job/log-shipping.js')).mirrorJobLogs(store) : null;
  let onMirror = () => {};
  const mirror = shared
    ? new StoreMirror(
        store,
        scope,
        () => onMirror(),
        (err) =>
          dash
            .getState()
            .setMessage(
              `the shared store could not be read (${err instanceof Error ? err.message : String(err)}); shown as last read`,
            ),
      )
    : null;
  const source: BoardSource = state ?? mirror!;
  // The actions keys started (a new todo, an abandon, an answer) are not
  // awaited by their keys: quitting just after one waits for it (bounded),
  // so closing the store does not cut its write short and lose it unsaid.
  const running = new Set<Promise<unknown>>();
  const actionsDone = () =>
    Promise.race([
      Promise.allSettled([...running]),
      new Promise((r) => setTimeout(r, ACTIONS_GRACE_MS).unref()),
    ]);
  const closeStores = async () => {
    await actionsDone();
    await mirror?.close();
    await shipping?.close();
    await store.close();
  };
  const init = {
    repo: scope,
    repoLabel: scope && repo ? repo.root : 'all repositories',
    banner: readBanner(process.env),
    color: !('NO_COLOR' in process.env && process.env.NO_COLOR !== ''),
  };
  const dash = createDashboardStore(init);
  // A job met with its runner gone is cleaned up here as prune would, and
  // so is a todo a runner killed after its job ended left in progress.
  const sync = new DashboardSync({
    state: source,
    dash,
    reap: boardReaper(store, dash),
    settle: boardSettler(store, dash, endSessionOf(store)),
    ...(shared ? { stored: store } : {}),
  });
  onMirror = () => sync.refreshJobs();
  // Read once the board is up: the config brings zod, which its start does without.
  if (scope && repo)
    void maxAttemptsOf(repo.root).then((n) => {
      if (n !== undefined) sync.setMaxAttempts(n);
    });
  if (scope && repo)
    void sandboxBanner(repo.root).then((warning) => {
      const banner = dash.getState().banner;
      if (warning) dash.setState({ banner: banner ? `${banner} · ${warning}` : warning });
    });
  try {
    await mirror?.load();
  } catch (err) {
    await closeStores().catch(() => {});
    throw err;
  }
  sync.loadAll();
  // Loaded lean; a small board draws faster with V8's own heap sizing (heap.ts).
  followBoardSize(dash);
  // A job that starts waiting for a person rings the bell and runs [notify]
  // command; the requests open now are on the board being opened.
  const notifier = new AskNotifier({ onError: (m) => dash.getState().setMessage(m) });
  notifier.update(dash.getState().jobs, dash.getState().todoTitles);
  dash.subscribe((s, prev) => {
    if (s.jobs !== prev.jobs) notifier.update(s.jobs, s.todoTitles);
  });
  if (repo)
    void notifyConfig(repo.root).then((c) => {
      if (c) notifier.setConfig(c);
    });
  sync.start();
  await mirror?.watch();

  const [{ render }, { Dashboard }] = await loadView();
  let quit: () => void = () => {};
  // `e` gives the terminal to $EDITOR: the app is unmounted (the alternate
  // screen left), the editor runs, and the app is drawn again.
  const suspended: { fn: (() => void) | null } = { fn: null };
  const deps: ActionDeps = {
    state: store,
    read: source,
    dash,
    repoRoot: repo?.root ?? null,
    maxAttempts: () => sync.maxAttemptsNow,
    // On a shared store the copy is read again first (the write is in the store).
    onChanged: () => (mirror ? void mirror.refresh() : sync.refreshJobs()),
    quit: () => quit(),
    track: (p) => {
      running.add(p);
      void p.finally(() => running.delete(p));
    },
    suspend: (fn) => {
      warm.stop();
      suspended.fn = fn;
      app.unmount();
    },
  };
  const actions = createActions(deps);
  // The person's first key ends the warm-up (warm.ts): theirs go first.
  const boardActions: Actions = {
    ...actions,
    key: (input, key) => {
      warm.stop();
      actions.key(input, key);
    },
  };
  // Off screen, a copy's keys move the copy only; it only moves, so nothing else is reached.
  const warm = warmBoard({
    render,
    element: (copy) =>
      createElement(Dashboard, {
        store: copy,
        actions: createActions({
          ...deps,
          dash: copy,
          onChanged: () => {},
          quit: () => {},
          suspend: () => {},
        }),
      }),
    dash,
    newStore: () => createDashboardStore(init),
    columns: process.stdout.columns,
    rows: process.stdout.rows,
    maxFps: RENDER_OPTIONS.maxFps,
    delayMs: WARM_DELAY_MS,
  });
  const mount = () =>
    render(createElement(Dashboard, { store: dash, actions: boardActions }), RENDER_OPTIONS);
  let app = mount();
  quit = () => app.unmount();

  const restore = () => {
    try {
      app.unmount();
    } catch {}
    process.stdout.write(RESTORE);
  };
  const onSignal = (sig: NodeJS.Signals) => {
    restore();
    void notifier.close();
    void sync.close();
    const code = sig === 'SIGINT' ? 130 : 143;
    if (state) {
      state.close();
      process.exit(code);
    }
    // The shipper sends what the board appended before the process goes (bounded).
    setTimeout(() => process.exit(code), 3000).unref();
    void closeStores().finally(() => process.exit(code));
  };
  const onCrash = (err: unknown) => {
    restore();
    // A damaged store (met by a refresh) is no crash: its message says what to do.
    process.stderr.write(
      err instanceof UserError
        ? `ii: ${err.message}\n`
        : `ii: dashboard crashed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(err instanceof UserError ? err.exitCode : 3);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  try {
    for (;;) {
      await app.waitUntilExit();
      const fn = suspended.fn;
      suspended.fn = null;
      if (!fn) break;
      process.stdout.write(RESTORE);
      process.stdin.setRawMode?.(false);
      fn();
      app = mount();
    }
  } finally {
    warm.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
    process.stdout.write(RESTORE);
    await notifier.close();
    await sync.close();
    if (state) state.close();
    else await closeStores();
    // Nothing of the dashboard may keep the process alive once it has quit.
    process.stdin.pause();
    process.stdin.unref?.();
  }
}
