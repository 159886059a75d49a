// Runs the user's test commands, one by one, each through a shell in the
// workspace (the only shell incrementum ever starts) and in its own process
// group, so a cancel kills the command and everything it started.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { TestResult } from '../model/job.js';

export interface TestRunOptions {
  commands: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Aborting kills the running command's process group and skips the rest. */
  signal?: AbortSignal;
  onStart?: (command: string) => void;
  onOutput?: (command: string, stream: 'stdout' | 'stderr', text: string) => void;
  onEnd?: (result: TestResult) => void;
  /** Grace between SIGTERM and SIGKILL of a group. */
  killGraceMs?: number;
}

export interface TestRun {
  passed: boolean;
  results: TestResult[];
  /** True when the run was cut short by the signal. */
  aborted: boolean;
}

/** Signals the whole group; a group that is already gone is fine. */
function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {}
}

function runOne(command: string, o: TestRunOptions): Promise<TestResult & { aborted: boolean }> {
  const grace = o.killGraceMs ?? 2000;
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: o.cwd,
      env: o.env ?? process.env,
      detached: true, // its own process group
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    let aborted = false;
    let exitCode: number | null = null;
    let killTimer: NodeJS.Timeout | undefined;
    // SIGTERM the group now, SIGKILL it after the grace period if the pipes
    // are still held open (something ignored SIGTERM).
    const endGroup = () => {
      if (!pid || killTimer) return;
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), grace);
    };
    const onAbort = () => {
      aborted = true;
      endGroup();
    };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    for (const stream of ['stdout', 'stderr'] as const)
      child[stream].on('data', (b: Buffer) => o.onOutput?.(command, stream, b.toString('utf8')));
    let settled = false;
    const finish = (code: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(killTimer);
      // Whatever of the group is left (it ignored SIGTERM, or closed its
      // pipes and lives on in the background) must not outlive the run.
      if (pid) killGroup(pid, 'SIGKILL');
      o.signal?.removeEventListener('abort', onAbort);
      resolve({ command, exit_code: code, duration_ms: Date.now() - started, aborted });
    };
    child.on('error', (err) => {
      o.onOutput?.(command, 'stderr', `cannot start the shell: ${err.message}\n`);
      finish(127);
    });
    child.on('exit', (code, sig) => {
      exitCode = code ?? 128 + (sig ? (constants.signals[sig] ?? 0) : 0);
      // The shell is gone; anything it left in the background would hold the
      // pipes open and outlive the job.
      endGroup();
    });
    child.on('close', () => finish(exitCode ?? 1));
  });
}

/** Runs every command in order (all of them, so the table is complete), unless aborted. */
export async function runTests(o: TestRunOptions): Promise<TestRun> {
  const results: TestResult[] = [];
  for (const command of o.commands) {
    if (o.signal?.aborted) return { passed: false, results, aborted: true };
    o.onStart?.(command);
    const r = await runOne(command, o);
    const result: TestResult = { command: r.command, exit_code: r.exit_code, duration_ms: r.duration_ms };
    results.push(result);
    o.onEnd?.(result);
    if (r.aborted || o.signal?.aborted) return { passed: false, results, aborted: true };
  }
  return { passed: results.every((r) => r.exit_code === 0), results, aborted: false };
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The feedback an implement prompt gets after a failed run: a Markdown table of command and exit code. */
export function testFailureTable(results: TestResult[]): string {
  const rows = results.map((r) => `| \`${cell(r.command)}\` | ${r.exit_code} |`);
  return [
    'The tests failed:',
    '',
    '| command | exit code |',
    '| --- | --- |',
    ...rows,
    '',
    'Run the failing commands in the workspace to see their output, then fix the cause.',
  ].join('\n');
}
