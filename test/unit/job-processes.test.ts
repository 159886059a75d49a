// The processes a job left outside its process groups: found by their
// directory or by the job's id in their environment, and ended. Real
// processes, each started through `setsid` as an agent's shell would.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processesIn } from '../../src/proc/cwd.js';
import { endJobProcesses, jobProcesses } from '../../src/proc/job-processes.js';
import { isRunning, runningWith } from '../helpers/procs.js';
import { tempDir, waitFor } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
const pids: number[] = [];
beforeEach(() => {
  tmp = tempDir('ii-jp-');
});
afterEach(() => {
  for (const p of pids.splice(0))
    try {
      process.kill(p, 'SIGKILL');
    } catch {}
  tmp.cleanup();
});

let n = 0;
/**
 * Starts `sleep <unique>` as a grandchild in a session of its own (the shell
 * that started it exits at once), in `cwd` with `env`; resolves its pid.
 */
async function setsidSleep(cwd: string, env: NodeJS.ProcessEnv, stubborn = false): Promise<number> {
  const secs = `600${process.pid}.${++n}`;
  const inner = stubborn ? `trap '' TERM; sleep ${secs}; :` : `exec sleep ${secs}`;
  const sh = spawn('/bin/sh', ['-c', `setsid /bin/sh -c "${inner}" </dev/null >/dev/null 2>&1 &`], {
    cwd,
    env: { PATH: process.env.PATH, ...env },
    stdio: 'ignore',
  });
  await new Promise((r) => sh.on('exit', r));
  const [pid] = await waitFor(() => {
    const found = runningWith(`sleep ${secs}`);
    return found.length ? found : null;
  }, 'the setsid sleep');
  pids.push(pid!);
  return pid!;
}

describe('a job’s processes outside its groups', () => {
  it('are found by their cwd in the workspace or the job id in their environment, and only those', async () => {
    const ws = join(tmp.path, 'ws');
    mkdirSync(join(ws, 'sub'), { recursive: true });
    const byCwd = await setsidSleep(join(ws, 'sub'), {});
    const byEnv = await setsidSleep('/', { II_JOB_ID: 'job-a' });
    const otherJob = await setsidSleep('/', { II_JOB_ID: 'job-ab' });
    const found = jobProcesses({ jobIds: ['job-a'], dirs: [ws] });
    expect(found.find((p) => p.pid === byCwd)?.why).toBe('cwd');
    expect(found.find((p) => p.pid === byEnv)?.why).toBe('env');
    expect(found.map((p) => p.pid)).not.toContain(otherJob);
    expect(found.map((p) => p.pid)).not.toContain(process.pid);
    expect(processesIn(ws)).toEqual([byCwd]);
  });

  it('end with SIGKILL when they ignore SIGTERM, and nothing else is touched', async () => {
    const ws = join(tmp.path, 'ws');
    mkdirSync(ws);
    const stubborn = await setsidSleep('/', { II_JOB_ID: 'job-b' }, true);
    const inWs = await setsidSleep(ws, {});
    const bystander = await setsidSleep('/', { II_JOB_ID: 'job-c' });
    const r = await endJobProcesses({ jobIds: ['job-b'], dirs: [ws] }, 300);
    expect(r.left).toEqual([]);
    expect(r.ended).toEqual(expect.arrayContaining([stubborn, inWs]));
    await waitFor(() => !isRunning(stubborn) && !isRunning(inWs), 'both to be gone');
    expect(isRunning(bystander)).toBe(true);
    expect(jobProcesses({ jobIds: ['job-b'], dirs: [ws] })).toEqual([]);
  });

  it('a process working in a deleted workspace is still found by it', async () => {
    const ws = join(tmp.path, 'gone');
    mkdirSync(ws);
    const pid = await setsidSleep(ws, {});
    const { rmSync } = await import('node:fs');
    rmSync(ws, { recursive: true, force: true });
    expect(jobProcesses({ jobIds: [], dirs: [ws] }).map((p) => p.pid)).toEqual([pid]);
  });
});

/**
 * Whether this machine lets a test chroot without privileges: a user
 * namespace (unshare -r), python3 for a chroot() that keeps the current
 * directory outside the new root, and ldd to copy sleep's libraries in.
 */
const canChroot = (() => {
  const ok = (cmd: string, args: string[]) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
  return ok('unshare', ['-r', 'true']) && ok('python3', ['-c', '0']) && ok('ldd', ['/bin/sleep']);
})();

describe('a job’s process in a chroot inside the workspace', () => {
  it.skipIf(!canChroot)('is found by its root directory though its cwd is outside', async () => {
    const ws = join(tmp.path, 'ws');
    // A root holding sleep and the libraries it loads.
    for (const file of [
      '/bin/sleep',
      ...execFileSync('ldd', ['/bin/sleep'], { encoding: 'utf8' }).match(/\/\S+/g)!,
    ]) {
      mkdirSync(join(ws, dirname(file)), { recursive: true });
      copyFileSync(file, join(ws, file));
    }
    const secs = `600${process.pid}.${++n}`;
    const c = spawn(
      'unshare',
      [
        '-r',
        'python3',
        '-c',
        'import os,sys; os.chroot(sys.argv[1]); os.execv("/bin/sleep", ["sleep", sys.argv[2]])',
        ws,
        secs,
      ],
      { cwd: '/', stdio: 'ignore' },
    );
    pids.push(c.pid!);
    const [pid] = await waitFor(() => {
      const found = runningWith(`sleep ${secs}`);
      return found.length ? found : null;
    }, 'the chrooted sleep');
    expect(jobProcesses({ jobIds: [], dirs: [ws] })).toEqual([expect.objectContaining({ pid, why: 'root' })]);
    expect(processesIn(ws)).toEqual([pid]);
    const r = await endJobProcesses({ jobIds: [], dirs: [ws] }, 300);
    expect(r).toEqual({ ended: [pid], left: [] });
  });
});
