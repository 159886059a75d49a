import { Box, Text, useInput, useWindowSize } from 'ink';
import { useEffect, useMemo } from 'react';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import type { Actions } from '../src/dashboard/view/actions-api.js';
import { shortJobId } from '../src/model/job-id.js';
import { diffRequest, pairLabel } from '../src/dashboard/view/diff-request.js';
import {
  boardColumns,
  cursor,
  drilledJob,
  jobCounts,
  selectedJob,
  type ColumnData,
} from '../src/dashboard/view/board.js';
import { cardReason, reasonPaneHeight } from '../src/dashboard/view/card-reason.js';
import { extraAnswers, keyHints, modeOf, type Hint } from '../src/dashboard/view/keymap.js';
import { logLines } from '../src/dashboard/view/log-view.js';
import { diffKey, iterationLabel } from '../src/dashboard/view/state.js';
import type { DashboardStore } from '../src/dashboard/view/store.js';
import { commitOutcome, latestCommit, recordedFiles } from '../src/model/derive.js';
import { shownLine } from '../src/text/shown.js';
import { Board, boardLayout } from './Board.js';
import { ChangeHistory, CHANGE_HISTORY_HEIGHT } from './ChangeHistory.js';
import { CommitDetail } from './CommitDetail.js';
import { Confirm, confirmHeight } from './Confirm.js';
import { TodoForm, TODO_FORM_HEIGHT } from './TodoForm.js';
import { AskView } from './AskView.js';
import { NoteInput, NOTE_INPUT_HEIGHT } from './NoteInput.js';
import { waitingCount } from '../src/dashboard/view/needs-you.js';
import { runLine } from '../src/dashboard/view/run-line.js';
import { FileList } from './FileList.js';
import { Header } from './Header.js';
import { HelpOverlay } from './HelpOverlay.js';
import { diffLineColor, iterationDiffLines } from './IterationDiff.js';
import { statusFiles } from '../src/dashboard/view/status-files.js';
import { JobDetail, JOB_DETAIL_HEIGHT } from './JobDetail.js';
import { Lines } from './Lines.js';
import { LogPane } from './LogPane.js';
import { ReasonPane } from './ReasonPane.js';
import { StatusBar, STATUS_HEIGHT } from './StatusBar.js';

/** useShallow compares objects: "no runner line" as one. */
const NO_RUN = { full: '', short: '' };

export interface DashboardProps {
  store: DashboardStore;
  actions: Actions;
  /** Fixed size (tests); otherwise the terminal's, following resizes. */
  size?: { columns: number; rows: number };
}

/** The whole screen: header, the board of the current level (or an overlay), and the status bar. */
export function Dashboard({ store, actions, size }: DashboardProps) {
  const win = useWindowSize();
  const width = size?.columns ?? win.columns;
  const height = size?.rows ?? win.rows;
  // Only what the frame itself draws: a keypress that scrolls or filters
  // re-renders the part that shows it, not the whole screen.
  const nav = useStore(
    store,
    useShallow((s) => ({
      level: s.nav.level,
      overlay: s.nav.overlay != null,
      confirm: s.nav.confirm,
      form: s.nav.form,
      note: s.nav.note,
    })),
  );
  const color = useStore(store, (s) => s.color);
  const mode = useStore(store, modeOf);
  useInput((input, key) => actions.key(input, key));

  const extras = nav.confirm ? extraAnswers(nav.confirm.kind) : [];
  const confirmH = nav.confirm
    ? confirmHeight(nav.confirm.prompt, width, extras.length)
    : nav.note
      ? NOTE_INPUT_HEIGHT
      : nav.form
        ? TODO_FORM_HEIGHT
        : 0;
  const bodyH = Math.max(3, height - 1 - STATUS_HEIGHT - confirmH);
  return (
    <Box flexDirection="column" width={width} height={height}>
      <TopLine store={store} width={width} />
      <Box height={bodyH} width={width} flexDirection="column">
        {nav.overlay ? (
          <OverlayBody store={store} width={width} height={bodyH} />
        ) : (
          <LevelBody store={store} width={width} height={bodyH} />
        )}
      </Box>
      {nav.confirm ? (
        <Confirm prompt={nav.confirm.prompt} extras={extras} width={width} color={color} />
      ) : null}
      {!nav.confirm && nav.note ? <NoteInput note={nav.note} width={width} color={color} /> : null}
      {!nav.confirm && !nav.note && nav.form ? (
        <TodoForm form={nav.form} width={width} color={color} />
      ) : null}
      <Status store={store} width={width} hints={keyHints(mode, nav.level)} />
    </Box>
  );
}

function TopLine({ store, width }: { store: DashboardStore; width: number }) {
  const crumbs = useStore(
    store,
    useShallow((s) => {
      const out = ['Jobs'];
      if (s.nav.jobId) out.push(`job ${shortJobId(s.nav.jobId)}`);
      if (s.nav.change != null) out.push(`change ${s.nav.change + 1}`);
      if (s.nav.iteration != null) out.push(`iteration ${s.nav.iteration + 1}`);
      if (s.nav.overlay) out.push(s.nav.overlay);
      return out;
    }),
  );
  const banner = useStore(store, (s) => s.banner);
  const color = useStore(store, (s) => s.color);
  const needsYou = useStore(store, (s) => waitingCount(s.jobs));
  const run = useStore(
    store,
    useShallow((s) => runLine(s) ?? NO_RUN),
  );
  return (
    <Header
      crumbs={crumbs}
      banner={banner}
      run={run === NO_RUN ? null : run}
      needsYou={needsYou}
      width={width}
      color={color}
    />
  );
}

function LevelBody({ store, width, height }: { store: DashboardStore; width: number; height: number }) {
  const level = useStore(store, (s) => s.nav.level);
  const columns = useStore(store, boardColumns);
  const cur = useStore(store, useShallow(cursor));
  const color = useStore(store, (s) => s.color);
  const job = useStore(store, (s) => (s.nav.level === 'jobs' ? selectedJob(s) : drilledJob(s)));
  const title = useStore(store, (s) => (job ? (s.todoTitles[job.todo_id] ?? job.todo_id) : ''));
  const stale = useStore(store, (s) => (job ? s.stale[job.id] === true : false));
  const live = useStore(store, (s) => (job ? s.live[job.id] : undefined));
  const reason = useStore(store, cardReason);
  const nav = useStore(
    store,
    useShallow((s) => ({
      change: s.nav.change,
      iteration: s.nav.iteration,
      scroll: s.nav.scroll,
      fullOutput: s.nav.fullOutput,
    })),
  );
  const tests = useStore(store, (s) => (job ? s.records[job.id]?.tests : undefined));
  const code = useStore(store, (s) =>
    s.nav.jobId && s.nav.change != null && s.nav.iteration != null
      ? s.diffs[diffKey(s.nav.jobId, s.nav.change + 1, s.nav.iteration + 1)]
      : undefined,
  );

  if (level === 'detail' && job && nav.change != null && nav.iteration != null)
    return (
      <CommitDetail
        job={job}
        change={nav.change}
        iteration={nav.iteration}
        code={code}
        width={width}
        height={height}
        scroll={nav.scroll}
        color={color}
        tests={tests}
        fullOutput={nav.fullOutput}
      />
    );
  if (level === 'changes' && job)
    return (
      <Box flexDirection="column">
        <JobDetail job={job} title={title} stale={stale} width={width} />
        <Board
          columns={columns}
          cursor={cur}
          width={width}
          height={height - JOB_DETAIL_HEIGHT}
          color={color}
        />
      </Box>
    );
  if (level === 'commits' && job && nav.change != null)
    return (
      <Box flexDirection="column">
        <ChangeHistory job={job} change={nav.change} width={width} />
        <Board
          columns={columns}
          cursor={cur}
          width={width}
          height={height - CHANGE_HISTORY_HEIGHT}
          color={color}
        />
      </Box>
    );
  // The jobs board, with the live pane of the selected active job when there
  // is room, or the selected card's whole reason (a failure, a refused landing).
  const pane = job && job.status === 'active' && height >= 14 ? livePaneHeight(columns, width, height) : 0;
  const reasonH = !pane && reason ? reasonPaneHeight(reason, width, height) : 0;
  return (
    <Box flexDirection="column">
      <Board columns={columns} cursor={cur} width={width} height={height - pane - reasonH} color={color} />
      {reasonH && reason ? <ReasonPane text={reason} width={width} height={reasonH} /> : null}
      {pane && job ? (
        <LogPane
          title={`── live: ${shortJobId(job.id)} ${shownLine(title)} (l for the full log)`}
          lines={live ?? []}
          width={width}
          height={pane}
        />
      ) : null}
    </Box>
  );
}

/**
 * The live pane's height under the jobs board: at least its old 8 lines (a
 * third of a small screen), and every line the board does not need to show
 * its cards (with two-line titles when they are cut), up to 60% of the body.
 * At 160×45 the pane had 7 lines under 30 empty ones.
 */
export function livePaneHeight(columns: ColumnData[], width: number, height: number): number {
  const min = Math.min(8, Math.floor(height / 3));
  const layout = boardLayout(columns, width);
  const board = layout.needs(layout.cut ? 2 : 1);
  const boardH = Math.max(height - Math.floor(height * 0.6), Math.min(board, height - min));
  return height - boardH;
}

function OverlayBody({ store, width, height }: { store: DashboardStore; width: number; height: number }) {
  const overlay = useStore(store, (s) => s.nav.overlay);
  const scroll = useStore(store, (s) => s.nav.scroll);
  const follow = useStore(store, (s) => s.nav.follow);
  const color = useStore(store, (s) => s.color);
  const job = useStore(store, selectedJob);
  const title = useStore(store, (s) => (job ? (s.todoTitles[job.todo_id] ?? job.todo_id) : ''));
  const files = useStore(store, (s) => (job ? s.files[job.id] : undefined));
  const log = useStore(store, logLines);
  // The keys page the log by the rows it is drawn in: the store learns their size from here.
  useEffect(() => store.getState().setLogSize(width, Math.max(1, height - 1)), [store, width, height]);
  const target = useStore(
    store,
    useShallow((s) => {
      const t = diffRequest(s);
      return t
        ? {
            job: t.job,
            change: t.change,
            iteration: t.iteration,
            fromC: t.from?.change,
            fromI: t.from?.iteration,
          }
        : { job: null, change: 0, iteration: 0, fromC: undefined, fromI: undefined };
    }),
  );
  const from =
    target.fromC != null && target.fromI != null ? { change: target.fromC, iteration: target.fromI } : null;
  const code = useStore(store, (s) =>
    target.job ? s.diffs[diffKey(target.job.id, target.change, target.iteration, from)] : undefined,
  );
  const diffLines = useMemo(() => {
    if (overlay !== 'diff' || !target.job) return [];
    return iterationDiffLines(code);
  }, [overlay, target.job, target.change, target.iteration, code]);

  if (overlay === 'help') return <HelpOverlay width={width} height={height} scroll={scroll} />;
  if (overlay === 'ask' && job)
    return (
      <AskView
        job={job}
        title={title}
        width={width}
        height={height}
        scroll={scroll}
        color={color}
        now={Date.now()}
      />
    );
  if (overlay === 'files' && job)
    return (
      <FileList
        jobId={job.id}
        // The tracker's live reports while the job runs; its record once they are gone.
        files={files?.length ? files : recordedFiles(job)}
        width={width}
        height={height}
        scroll={scroll}
      />
    );
  if (overlay === 'logs' && job)
    return (
      <LogPane
        title={`Log of job ${shortJobId(job.id)} (${job.status})`}
        hints="j/k g/G PgUp/PgDn · esc closes"
        lines={log}
        width={width}
        height={height}
        top={scroll}
        follow={follow}
      />
    );
  if (overlay === 'diff' && target.job)
    return (
      <Box flexDirection="column">
        <Text bold wrap="truncate-end">
          {from
            ? `Diff of iterations ${pairLabel(from, target)} · job ${shortJobId(target.job.id)} · esc closes`
            : `Iteration diff · ${iterationLabel(target)} against the one before · job ${shortJobId(target.job.id)} · esc closes`}
        </Text>
        <Lines
          lines={diffLines}
          width={width}
          height={height - 1}
          scroll={scroll}
          color={color ? diffLineColor : undefined}
        />
      </Box>
    );
  return <Text dimColor>(nothing to show: esc closes)</Text>;
}

function Status({ store, width, hints }: { store: DashboardStore; width: number; hints: Hint[] }) {
  const repo = useStore(store, (s) => s.repoLabel);
  const counts = useStore(
    store,
    useShallow((s) => jobCounts(s.jobs, s.stale)),
  );
  const job = useStore(store, (s) => (s.nav.level === 'jobs' ? selectedJob(s) : drilledJob(s)));
  const files = useStore(
    store,
    useShallow((s) => statusFiles(s, job)),
  );
  const nav = useStore(
    store,
    useShallow((s) => ({
      filter: s.nav.filter,
      filtering: s.nav.filtering,
      showFinished: s.nav.showFinished,
    })),
  );
  const message = useStore(store, (s) => s.message);
  const color = useStore(store, (s) => s.color);
  const mark = useStore(store, (s) => s.nav.mark);
  const last = job ? latestCommit(job) : null;
  const lastCommit = last ? `last ${last.commit_id.slice(0, 7)} ${commitOutcome(last)}` : null;
  return (
    <StatusBar
      repo={repo}
      counts={counts}
      files={files}
      autoCommit={job ? job.auto_commit : null}
      lastCommit={lastCommit}
      filter={nav.filter}
      filtering={nav.filtering}
      showFinished={nav.showFinished}
      message={message}
      lead={mark ? `marked ${iterationLabel(mark)}: d diffs against it, [ ] other changes, esc clears` : null}
      hints={hints}
      width={width}
      color={color}
    />
  );
}
