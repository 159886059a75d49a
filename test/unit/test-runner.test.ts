import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTests, testFailureTable } from '../../src/job/test-runner.js';
import { isRunning } from '../helpers/procs.js';
import { tempDir, waitFor } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir()));
afterEach(() => tmp.cleanup());

describe('runTests', () => {
  it('runs every command in the workspace, in order, streaming output', async () => {
    const out: string[] = [];
    const ends: number[] = [];
    const r = await runTests({
      commands: ['pwd', 'echo err >&2; exit 3', 'echo done'],
      cwd: tmp.path,
      onOutput: (c, s, t) => out.push(`${s}:${t.trim()}`),
      onEnd: (res) => ends.push(res.exit_code),
    });
    expect(r.passed).toBe(false);
    expect(r.aborted).toBe(false);
    expect(r.results.map((x) => [x.command, x.exit_code])).toEqual([
      ['pwd', 0],
      ['echo err >&2; exit 3', 3],
      ['echo done', 0],
    ]);
    expect(ends).toEqual([0, 3, 0]);
    expect(out).toContain(`stdout:${tmp.path}`);
    expect(out).toContain('stderr:err');
    expect(out.at(-1)).toBe('stdout:done');
  });

  it('passes when every command exits 0', async () => {
    const r = await runTests({ commands: ['true', 'exit 0'], cwd: tmp.path });
    expect(r).toMatchObject({ passed: true, aborted: false });
  });

  it('a command whose shell cannot start fails with 127 and says why, naming what it ran', async () => {
    const out: string[] = [];
    const r = await runTests({
      commands: ['true'],
      cwd: join(tmp.path, 'gone'),
      onOutput: (_c, s, t) => out.push(`${s}:${t}`),
    });
    expect(r.results.map((x) => x.exit_code)).toEqual([127]);
    expect(out.join('')).toMatch(/^stderr:cannot start the shell: .*ENOENT.*\/bin\/sh -c true/s);
  });

  it('abort kills the command and everything it started', async () => {
    const pidFile = join(tmp.path, 'pids');
    const ac = new AbortController();
    const run = runTests({
      commands: [`sleep 300 & echo $! > ${pidFile}; sleep 300`, 'echo never'],
      cwd: tmp.path,
      signal: ac.signal,
      onStart: () => {},
    });
    const bg = await waitFor(() => Number(readFileSync(pidFile, 'utf8').trim()) || 0, 'the background pid');
    ac.abort();
    const r = await run;
    expect(r.aborted).toBe(true);
    expect(r.results).toHaveLength(1);
    expect(r.results[0]!.exit_code).not.toBe(0);
    await waitFor(() => !isRunning(bg), 'the background sleep to be gone');
  });

  it('a command that leaves a background process behind does not hang the run', async () => {
    const pidFile = join(tmp.path, 'pid');
    const r = await runTests({ commands: [`sleep 300 & echo $! > ${pidFile}; exit 0`], cwd: tmp.path });
    expect(r.passed).toBe(true);
    const bg = Number(readFileSync(pidFile, 'utf8').trim());
    await waitFor(() => !isRunning(bg), 'the leftover sleep to be gone');
  });
});

describe('testFailureTable', () => {
  it('job-subcommand spec, State Machine > testing, step 3: a Markdown table with columns `Command` and `Exit Code`', () => {
    const t = testFailureTable([
      { command: 'npm test', exit_code: 1, duration_ms: 5 },
      { command: 'a | b', exit_code: 0, duration_ms: 1 },
    ]);
    expect(t).toContain('| Command | Exit Code |\n| --- | --- |\n| `npm test` | 1 |\n| `a \\| b` | 0 |');
  });
});

describe('runTests, stubborn processes', () => {
  it('a background process that ignores SIGTERM is killed after the grace period', async () => {
    const tmp2 = tempDir();
    try {
      const pidFile = join(tmp2.path, 'pid');
      const r = await runTests({
        commands: [`(trap '' TERM; sleep 300) & echo $! > ${pidFile}; exit 0`],
        cwd: tmp2.path,
        killGraceMs: 200,
      });
      expect(r.passed).toBe(true);
      const bg = Number(readFileSync(pidFile, 'utf8').trim());
      await waitFor(() => !isRunning(bg), 'the stubborn subshell to be gone');
    } finally {
      tmp2.cleanup();
    }
  });
});
