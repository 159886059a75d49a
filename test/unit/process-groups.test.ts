import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTests, testFailureTable } from '../../src/job/test-runner.js';
import { pidAlive } from '../../src/proc/alive.js';
import { processesIn } from '../../src/proc/cwd.js';
import { groupWatch, procScanCount, signalGroup, startTicks } from '../../src/proc/group.js';
import { endRecordedGroups, groupRecorder, spawnInGroup } from '../../src/proc/recorded.js';
import { openStateStore, type StateStore } from '../../src/state/index.js';
import { isRunning, runningInGroup } from '../helpers/procs.js';
import { tempDir, waitFor } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
const started: number[] = [];
beforeEach(() => {
  tmp = tempDir('ii-pg-');
  store = openStateStore({ dir: join(tmp.path, 'state') });
});
afterEach(() => {
  for (const pgid of started.splice(0)) signalGroup(pgid, 'SIGKILL');
  store.close();
  tmp.cleanup();
});

/** A detached group (as a runner leaves it) whose shell and sleep ignore SIGTERM. */
function stubbornGroup(cwd: string): number {
  const child = spawn('/bin/sh', ['-c', "trap '' TERM; sleep 600 & sleep 600; wait"], {
    cwd,
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  started.push(child.pid!);
  return child.pid!;
}

describe('recorded process groups', () => {
  it('records a group with its leader start time, lists it by job and workspace, forgets it', async () => {
    const pgid = stubbornGroup(tmp.path);
    const g = groupRecorder(asyncStore(store), 'job1', '/ws/1')(pgid, 'test: sleep');
    const [rec] = store.processGroups.list({ job_id: 'job1' });
    expect(rec).toMatchObject({ job_id: 'job1', workspace_path: '/ws/1', pgid, label: 'test: sleep' });
    expect(rec!.start_ticks).toBe(startTicks(pgid));
    expect(store.processGroups.list({ workspace_path: '/ws/1' })).toHaveLength(1);
    expect(store.processGroups.list({ job_id: 'other' })).toEqual([]);
    await g.forget();
    expect(store.processGroups.list({ job_id: 'job1' })).toEqual([]);
  });

  it('ends a recorded group that ignores SIGTERM (SIGKILL after the grace) and drops its record', async () => {
    const pgid = stubbornGroup(tmp.path);
    await waitFor(() => runningInGroup(pgid).length >= 2, 'the shell and its sleeps');
    groupRecorder(asyncStore(store), 'job1', tmp.path)(pgid, 'test');
    const r = await endRecordedGroups(asyncStore(store), { job_id: 'job1' }, 200);
    expect(r.ended.map((g) => g.pgid)).toEqual([pgid]);
    expect(runningInGroup(pgid)).toEqual([]);
    expect(store.processGroups.list({ job_id: 'job1' })).toEqual([]);
  });

  it('never signals a group whose leader is not the recorded process (a reused pid)', async () => {
    const pgid = stubbornGroup(tmp.path);
    await waitFor(() => runningInGroup(pgid).length >= 2, 'the group');
    store.processGroups.record({
      job_id: 'job1',
      workspace_path: tmp.path,
      pgid,
      start_ticks: startTicks(pgid)! - 1, // recorded for an earlier process with this pid
      host: (await import('node:os')).hostname(),
      label: 'test',
    });
    const r = await endRecordedGroups(asyncStore(store), { job_id: 'job1' }, 200);
    expect(r.ended).toEqual([]);
    expect(runningInGroup(pgid).length).toBeGreaterThanOrEqual(2);
    expect(store.processGroups.list({ job_id: 'job1' })).toEqual([]);
  });

  it("never signals a group that took a recorded group's number after it emptied (a shell's job whose leader exited)", async () => {
    // The shape of the demo's flake: a record outlives its group, the pid comes
    // back as the group a shell made for a job (setpgid, no session of its own),
    // whose leader has exited while its processes (there, the demo's runners) run on.
    const pidFile = join(tmp.path, 'pid');
    const shell = spawn(
      '/bin/bash',
      ['-c', `set -m; sh -c 'sleep 600 & echo $! > ${pidFile}' & echo $! > ${pidFile}.job; wait`],
      { stdio: 'ignore' },
    );
    await new Promise((r) => shell.on('exit', r));
    const pgid = Number(readFileSync(`${pidFile}.job`, 'utf8').trim());
    const sleeper = Number(readFileSync(pidFile, 'utf8').trim());
    started.push(pgid);
    expect(isRunning(pgid)).toBe(false); // its leader is gone
    expect(runningInGroup(pgid)).toEqual([sleeper]);
    store.processGroups.record({
      job_id: 'job1',
      workspace_path: tmp.path,
      pgid,
      start_ticks: startTicks(sleeper)! - 1, // the earlier process that had this pid
      host: (await import('node:os')).hostname(),
      label: 'test',
    });
    const r = await endRecordedGroups(asyncStore(store), { job_id: 'job1' }, 200);
    expect(r.ended).toEqual([]);
    expect(isRunning(sleeper)).toBe(true);
    expect(store.processGroups.list({ job_id: 'job1' })).toEqual([]);
  });

  it('still ends what a recorded group left behind once its leader has exited', async () => {
    const pidFile = join(tmp.path, 'pid');
    const child = spawn('/bin/sh', ['-c', `sleep 600 & echo $! > ${pidFile}`], {
      detached: true,
      stdio: 'ignore',
    });
    const pgid = child.pid!;
    started.push(pgid);
    groupRecorder(asyncStore(store), 'job1', tmp.path)(pgid, 'test');
    await new Promise((r) => child.on('exit', r));
    const sleeper = Number(readFileSync(pidFile, 'utf8').trim());
    expect(runningInGroup(pgid)).toEqual([sleeper]);
    const r = await endRecordedGroups(asyncStore(store), { job_id: 'job1' }, 200);
    expect(r.ended.map((g) => g.pgid)).toEqual([pgid]);
    expect(isRunning(sleeper)).toBe(false);
  });

  it('spawnInGroup records the group while it runs; stop() ends it and drops the record', async () => {
    const g = spawnInGroup(
      '/bin/sh',
      ['-c', "trap '' TERM; sleep 600"],
      { cwd: tmp.path, stdio: 'ignore' },
      {
        recorder: groupRecorder(asyncStore(store), 'job2', tmp.path),
        label: 'setup: sleep',
      },
    );
    const pgid = g.child.pid!;
    started.push(pgid);
    expect(store.processGroups.list({ job_id: 'job2' }).map((r) => r.pgid)).toEqual([pgid]);
    await waitFor(() => processesIn(tmp.path).length > 0, 'a process in the directory');
    await g.stop(200);
    expect(runningInGroup(pgid)).toEqual([]);
    expect(processesIn(tmp.path)).toEqual([]);
    expect(store.processGroups.list({ job_id: 'job2' })).toEqual([]);
  });

  it('stop() with an EOF grace closes stdin first: a child that ends at EOF gets no signal', async () => {
    const g = spawnInGroup('/bin/sh', ['-c', 'cat >/dev/null; exit 7'], {
      cwd: tmp.path,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    started.push(g.child.pid!);
    const exit = new Promise<[number | null, string | null]>((r) => g.child.on('exit', (c, s) => r([c, s])));
    await g.stop(200, 10_000);
    expect(await exit).toEqual([7, null]);
  });

  it('stop() with an EOF grace still ends a child that ignores EOF and SIGTERM', async () => {
    const g = spawnInGroup('/bin/sh', ['-c', "trap '' TERM; sleep 600"], {
      cwd: tmp.path,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    const pgid = g.child.pid!;
    started.push(pgid);
    const exit = new Promise<[number | null, string | null]>((r) => g.child.on('exit', (c, s) => r([c, s])));
    await g.stop(200, 200);
    expect(await exit).toEqual([null, 'SIGKILL']);
    expect(runningInGroup(pgid)).toEqual([]);
  });
});

describe('groupWatch (waitGroupGone asks it every 20 ms)', () => {
  it('reads all of /proc once while a member it saw runs, and again only when none does, finding one started since', async () => {
    // The shell forks a sleep when given a line and ends at the next, so the
    // group's one member at the first look is gone while a newer one runs.
    const sh = spawn('/bin/sh', ['-c', 'read a; sleep 600 & echo $!; read b'], {
      detached: true,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const pgid = sh.pid!;
    started.push(pgid);
    let out = '';
    sh.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const alive = groupWatch(pgid);
    const before = procScanCount();
    expect(alive()).toBe(true);
    for (let i = 0; i < 50; i++) expect(alive()).toBe(true);
    expect(procScanCount() - before).toBe(1);
    sh.stdin.write('\n');
    const sleepPid = Number(await waitFor(() => /^\d+\n/.exec(out)?.[0], 'the sleep started'));
    const exited = new Promise((r) => sh.once('exit', r));
    sh.stdin.write('\n');
    await exited;
    // The shell seen at the first look is gone: the sleep it left is found.
    expect(alive()).toBe(true);
    expect(procScanCount() - before).toBe(2);
    expect(alive()).toBe(true);
    expect(procScanCount() - before).toBe(2);
    process.kill(sleepPid, 'SIGKILL');
    await waitFor(() => !isRunning(sleepPid), 'the sleep ended');
    expect(alive()).toBe(false);
  });
});

describe('pidAlive', () => {
  it('says a killed process nobody reaps (a zombie) is gone, as a dead runner whose parent died and whose PID 1 reaps nothing', async () => {
    // The shell starts a child and becomes sleep, which never reaps it: once
    // that child is killed it stays a zombie while its parent lives.
    const parent = spawn('/bin/sh', ['-c', 'sleep 600 & echo $!; exec sleep 600'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    started.push(parent.pid!);
    let out = '';
    parent.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const pid = Number(await waitFor(() => /^\d+\n/.exec(out)?.[0], 'the child pid'));
    expect(pidAlive(pid)).toBe(true);
    process.kill(pid, 'SIGKILL');
    await waitFor(() => readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '), 'the zombie');
    expect(pidAlive(pid)).toBe(false);
    expect(pidAlive(parent.pid!)).toBe(true);
  });
});

describe('test timeout', () => {
  it('ends a hanging command with everything it started, and the table says it timed out', async () => {
    const pidFile = join(tmp.path, 'pid');
    const recorded: number[] = [];
    const rec = groupRecorder(asyncStore(store), 'job3', tmp.path);
    const r = await runTests({
      commands: [`(trap '' TERM; sleep 600) & echo $! > ${pidFile}; sleep 600`, 'true'],
      cwd: tmp.path,
      timeoutMs: 1000,
      killGraceMs: 200,
      recordGroup: (pgid, label) => {
        recorded.push(pgid);
        return rec(pgid, label);
      },
    });
    expect(r.passed).toBe(false);
    expect(r.aborted).toBe(false);
    expect(r.results[0]).toMatchObject({ exit_code: 124, timed_out_after_s: 1 });
    expect(r.results[1]).toMatchObject({ command: 'true', exit_code: 0 });
    expect(r.results[1]!.timed_out_after_s).toBeUndefined();
    const bg = Number(readFileSync(pidFile, 'utf8').trim());
    expect(runningInGroup(recorded[0]!)).toEqual([]);
    expect(isRunning(bg)).toBe(false);
    expect(store.processGroups.list({ job_id: 'job3' })).toEqual([]);
    expect(testFailureTable(r.results)).toContain(
      `| \`(trap '' TERM; sleep 600) & echo $! > ${pidFile}; sleep 600\` | timed out after 1 s |`,
    );
  });
});
