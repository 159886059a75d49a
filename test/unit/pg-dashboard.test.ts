// The dashboard on a shared PostgreSQL store: a board opened on one
// connection shows what another connection (another machine's runner) writes,
// as LISTEN/NOTIFY announces it, and the live pane of a job whose log files
// are not on the board's machine is read from the store's copy of its log.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { selectedJob, shownJobId } from '../../src/dashboard/view/board.js';
import { StoreMirror } from '../../src/dashboard/io/board-source.js';
import { DashboardSync } from '../../src/dashboard/io/sync.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import type { Job } from '../../src/model/job.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { tempDir, waitFor } from '../helpers/tmp.js';

const server = pgServer();
const REPO = 'r';

describe.skipIf(!server)(`the dashboard on PostgreSQL${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  const db = usePgDatabase();
  let writer: AsyncStateStore;
  let board: AsyncStateStore;
  let mirror: StoreMirror | null = null;
  let sync: DashboardSync | null = null;
  /** The lines the board's store reads of each job's log (its queries to job_logs, by job). */
  const reads = new Map<string, number>();
  const dirs: { cleanup(): void }[] = [];
  beforeEach(async () => {
    const here = tempDir();
    const there = tempDir();
    dirs.push(here, there);
    // Over loopback TCP, as another machine's runner and board reach the server.
    writer = await db.open({ password: true, dir: there.path });
    // The board's state dir is empty: no job's files are on its machine.
    board = await db.open({ password: true, dir: here.path });
    reads.clear();
    const read = board.logs.read.bind(board.logs);
    board.logs.read = (jobId, o) => {
      reads.set(jobId, (reads.get(jobId) ?? 0) + 1);
      return read(jobId, o);
    };
  });
  // Runs before the database's own after hook (hooks after a test run in reverse), which closes the stores.
  afterEach(async () => {
    await sync?.close();
    await mirror?.close();
    sync = null;
    mirror = null;
    for (const d of dirs.splice(0)) d.cleanup();
  });

  const openBoard = async () => {
    const dash = createDashboardStore({ repo: REPO, repoLabel: '/src/demo', color: false });
    const m = new StoreMirror(board, REPO, () => sync?.refreshJobs());
    mirror = m;
    await m.load();
    // A long fallback poll: LISTEN/NOTIFY, not the poll, must carry every change.
    sync = new DashboardSync({
      state: m,
      dash,
      stored: board,
      pollMs: 60_000,
      probe: { host: 'board-host', pidAlive: () => true },
    });
    sync.loadAll();
    sync.start();
    await m.watch();
    return dash;
  };

  it("shows jobs another connection writes, and a job's live lines from the store when its files are not here", async () => {
    const t0 = await writer.todos.create(REPO, { title: 'there before the board' });
    await writer.jobs.claim(REPO, { todo_id: t0.id, pid: 11, host: 'machine-b' }, () => null);
    const dash = await openBoard();
    const jobOf = (id: string) => dash.getState().jobs.find((j) => j.id === id);
    expect(dash.getState().jobs).toHaveLength(1);

    const t = await writer.todos.create(REPO, { title: 'from machine B' });
    const job = await writer.jobs.claim(REPO, { todo_id: t.id, pid: 12, host: 'machine-b' }, () => null);
    await waitFor(() => jobOf(job.id), 'the new job on the board', 20_000);
    await waitFor(() => dash.getState().todoTitles[t.id] === 'from machine B', 'its title', 20_000);
    await writer.jobs.setStage(job.id, 'testing');
    await waitFor(() => jobOf(job.id)?.stage === 'testing', 'the stage change', 20_000);

    // The runner on machine B ships its events to the store; none are in the board's state dir.
    const ev = (message: string) =>
      JSON.stringify({ ts: new Date().toISOString(), type: 'warning', message });
    await writer.logs.append(job.id, 'events', [ev('disk nearly full on B')]);
    // The pane of the job the board shows: the cursor is moved onto it.
    for (const dir of ['right', 'down', 'left', 'down', 'right', 'right', 'up'] as const) {
      if (selectedJob(dash.getState())?.id === job.id) break;
      dash.getState().dispatch({ type: 'move', dir });
    }
    expect(selectedJob(dash.getState())?.id).toBe(job.id);
    await waitFor(
      () => dash.getState().live[job.id]?.includes('! disk nearly full on B'),
      "the store's event in the pane",
      20_000,
    );
    await writer.logs.append(job.id, 'events', [ev('and a second line')]);
    await waitFor(
      () => dash.getState().live[job.id]?.includes('! and a second line'),
      'the appended event in the pane',
      20_000,
    );

    // Its agent's transcript is shipped too: the pane shows what the agent says.
    await writer.jobs.setStage(job.id, 'implementing');
    await writer.jobs.addAgentSession(job.id, {
      purpose: 'implement',
      id: 'sess-b',
      transcript: `jobs/${job.id}/transcripts/sess-b.jsonl`,
    });
    const chunk = (text: string) =>
      JSON.stringify({
        t: 1,
        dir: 'in',
        message: {
          jsonrpc: '2.0',
          method: 'session/update',
          params: { update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } },
        },
      });
    await writer.logs.append(job.id, 'transcript:sess-b', [chunk('the agent on machine B speaks')]);
    await waitFor(
      () => dash.getState().live[job.id]?.some((l) => l.includes('the agent on machine B speaks')),
      "the store's transcript in the pane",
      20_000,
    );

    // Write on one connection → on the board: the figure the issue asks for (reported, not asserted).
    const took: number[] = [];
    for (let i = 0; i < 40; i++) {
      const stage = i % 2 ? 'testing' : 'reviewing';
      const at = performance.now();
      await writer.jobs.setStage(job.id, stage);
      await waitFor(() => jobOf(job.id)?.stage === stage, 'the stage', 20_000, 1);
      took.push(performance.now() - at);
    }
    took.sort((a, b) => a - b);
    console.log(
      `write → board (PostgreSQL, loopback TCP): p50 ${took[19]!.toFixed(1)} ms, p95 ${took[37]!.toFixed(1)} ms`,
    );
  });

  it("reads a running job of another machine's log only while the board shows it, and all of it when it comes into view", async () => {
    const chunk = (text: string) =>
      JSON.stringify({
        t: 1,
        dir: 'in',
        message: {
          jsonrpc: '2.0',
          method: 'session/update',
          params: { update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } },
        },
      });
    const ev = (message: string) =>
      JSON.stringify({ ts: new Date().toISOString(), type: 'warning', message });
    const jobs: Job[] = [];
    for (const name of ['one', 'two']) {
      const t = await writer.todos.create(REPO, { title: `job ${name}` });
      const job = await writer.jobs.claim(REPO, { todo_id: t.id, pid: 12, host: 'machine-b' }, () => null);
      await writer.jobs.setStage(job.id, 'implementing');
      await writer.jobs.addAgentSession(job.id, {
        purpose: 'implement',
        id: `sess-${name}`,
        transcript: `jobs/${job.id}/transcripts/sess-${name}.jsonl`,
      });
      await writer.logs.append(job.id, 'events', [ev(`event of ${name}`)]);
      await writer.logs.append(job.id, `transcript:sess-${name}`, [chunk(`agent ${name} speaks`)]);
      jobs.push(job);
    }
    const dash = await openBoard();
    const shown = () => shownJobId(dash.getState());
    await waitFor(() => shown() !== null, 'a job shown', 20_000);
    const [a, b] = shown() === jobs[0]!.id ? [jobs[0]!, jobs[1]!] : [jobs[1]!, jobs[0]!];
    const said = (id: string, text: string) => dash.getState().live[id]?.some((l) => l.includes(text));
    const nameOf = (id: string) => (id === jobs[0]!.id ? 'one' : 'two');
    await waitFor(() => said(a.id, `agent ${nameOf(a.id)} speaks`), "the shown job's transcript", 20_000);
    // The job not shown keeps streaming: the board neither reads nor holds its log.
    for (let i = 0; i < 5; i++) {
      await writer.logs.append(b.id, `transcript:sess-${nameOf(b.id)}`, [chunk(`more ${i}`)]);
      await writer.logs.append(a.id, `transcript:sess-${nameOf(a.id)}`, [chunk(`shown ${i}`)]);
    }
    await waitFor(() => said(a.id, 'shown 4'), 'the shown job following its log', 20_000);
    expect(reads.get(b.id) ?? 0).toBe(0);
    expect(sync!.readersHeld()).toBe(1);
    expect(dash.getState().live[b.id]).toBeUndefined();

    // Moved onto the other job: its whole log is read then, events and transcript.
    for (const dir of ['down', 'up', 'right', 'left', 'down', 'down', 'up', 'up'] as const) {
      if (shown() === b.id) break;
      dash.getState().dispatch({ type: 'move', dir });
    }
    expect(shown()).toBe(b.id);
    await waitFor(() => said(b.id, 'more 4'), "the newly shown job's whole transcript", 20_000);
    expect(said(b.id, `agent ${nameOf(b.id)} speaks`)).toBe(true);
    expect(dash.getState().live[b.id]).toContain(`! event of ${nameOf(b.id)}`);
    // And the one that left the view is let go: only the shown job's log is held.
    expect(sync!.readersHeld()).toBe(1);
    const readsOfA = reads.get(a.id) ?? 0;
    await writer.logs.append(a.id, `transcript:sess-${nameOf(a.id)}`, [chunk('unseen')]);
    await writer.logs.append(b.id, `transcript:sess-${nameOf(b.id)}`, [chunk('seen')]);
    await waitFor(() => said(b.id, 'seen'), 'the shown job following its log', 20_000);
    expect(reads.get(a.id) ?? 0).toBe(readsOfA);
  });

  it('after the server ends its sessions, the board comes back and shows what was written meanwhile', async () => {
    const dash = await openBoard();
    const jobOf = (id: string) => dash.getState().jobs.find((j) => j.id === id);
    const t = await writer.todos.create(REPO, { title: 'before the cut' });
    const job = await writer.jobs.claim(REPO, { todo_id: t.id, pid: 12, host: 'machine-b' }, () => null);
    await waitFor(() => jobOf(job.id), 'the job on the board', 20_000);
    // Every session of the database ends (an administrator, a restart): the
    // board's LISTEN and its pool's connections too.
    expect(db.terminate()).toBeGreaterThan(0);
    // Written while the board may still be reconnecting (a pooled session
    // that was ended fails once: written again).
    const retry = async <T>(f: () => Promise<T>): Promise<T> => {
      for (let i = 0; ; i++)
        try {
          return await f();
        } catch (err) {
          if (i > 20) throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
    };
    await retry(() => writer.jobs.setStage(job.id, 'reviewing'));
    const t2 = await retry(() => writer.todos.create(REPO, { title: 'after the cut' }));
    await retry(() => writer.jobs.claim(REPO, { todo_id: t2.id, pid: 13, host: 'machine-b' }, () => null));
    await waitFor(() => jobOf(job.id)?.stage === 'reviewing', 'the stage written across the cut', 30_000);
    await waitFor(
      () => dash.getState().todoTitles[t2.id] === 'after the cut',
      'the job claimed after it',
      30_000,
    );
  });
});
