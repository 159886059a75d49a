// Runs the user's test commands, one by one, each through a shell in the
// workspace (the only shell incrementum ever starts) and in its own process
// group, so a cancel kills the command and everything it started.
import { constants } from 'node:os';
import type { TestResult } from '../model/job.js';
import { spawnInGroup, type GroupRecorder } from '../proc/recorded.js';
import type { Sandbox } from '../proc/sandbox/sandbox.js';

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
  /** A command still running after this long has its group ended and counts as failed (timed out). */
  timeoutMs?: number;
  /** Records each command's process group for the job (see src/proc/recorded.ts). */
  recordGroup?: GroupRecorder;
  /** The job's sandbox: each command runs inside it (src/proc/sandbox). */
  sandbox?: Sandbox | null;
}

export interface TestRun {
  passed: boolean;
  results: TestResult[];
  /** True when the run was cut short by the signal. */
  aborted: boolean;
}

function runOne(command: string, o: TestRunOptions): Promise<TestResult & { aborted: boolean }> {
  const grace = o.killGraceMs ?? 2000;
  const started = Date.now();
  return new Promise((resolve) => {
    const env = o.env ?? process.env;
    const run = o.sandbox
      ? o.sandbox.wrap('/bin/sh', ['-c', command], env)
      : { command: '/bin/sh', args: ['-c', command], env };
    const g = spawnInGroup(
      run.command,
      run.args,
      { cwd: o.cwd, env: run.env, stdio: ['ignore', 'pipe', 'pipe'] },
      o.recordGroup ? { recorder: o.recordGroup, label: `test: ${command}` } : undefined,
    );
    const child = g.child;
    let aborted = false;
    let timedOut = false;
    let exitCode: number | null = null;
    const onAbort = () => {
      aborted = true;
      void g.stop(grace);
    };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const timer =
      o.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            o.onOutput?.(
              command,
              'stderr',
              `\nincrementum: timed out after ${seconds(o.timeoutMs!)}; ending it\n`,
            );
            void g.stop(grace);
          }, o.timeoutMs)
        : undefined;
    for (const stream of ['stdout', 'stderr'] as const)
      child[stream]!.on('data', (b: Buffer) => o.onOutput?.(command, stream, b.toString('utf8')));
    let settled = false;
    const finish = async (code: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      // Whatever of the group is left (it ignored SIGTERM, or closed its
      // pipes and lives on in the background) must not outlive the run.
      await g.stop(grace);
      // A timed-out command fails whatever its shell made of the SIGTERM (124, as timeout(1) has it).
      const timed = timedOut && !aborted;
      resolve({
        command,
        exit_code: timed ? 124 : code,
        duration_ms: Date.now() - started,
        ...(timed ? { timed_out_after_s: o.timeoutMs! / 1000 } : {}),
        aborted,
      });
    };
    child.on('error', (err) => {
      o.onOutput?.(command, 'stderr', `cannot start the shell: ${err.message}\n`);
      void finish(127);
    });
    child.on('exit', (code, sig) => {
      exitCode = code ?? 128 + (sig ? (constants.signals[sig] ?? 0) : 0);
      // The shell is gone; anything it left in the background would hold the
      // pipes open and outlive the job.
      void g.stop(grace);
    });
    child.on('close', () => void finish(exitCode ?? 1));
  });
}

const seconds = (ms: number) => `${ms / 1000} s`;

/** Runs every command in order (all of them, so the table is complete), unless aborted. */
export async function runTests(o: TestRunOptions): Promise<TestRun> {
  const results: TestResult[] = [];
  for (const command of o.commands) {
    if (o.signal?.aborted) return { passed: false, results, aborted: true };
    o.onStart?.(command);
    const r = await runOne(command, o);
    const { aborted: _, ...result } = r;
    results.push(result);
    o.onEnd?.(result);
    if (r.aborted || o.signal?.aborted) return { passed: false, results, aborted: true };
  }
  return { passed: results.every((r) => r.exit_code === 0), results, aborted: false };
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * The feedback an implement prompt gets after a failed run: a Markdown table
 * with the job-subcommand spec's columns, `Command` and `Exit Code` (its
 * State Machine, testing, step 3), spelled as the spec spells them.
 */
export function testFailureTable(results: TestResult[]): string {
  const rows = results.map(
    (r) =>
      `| \`${cell(r.command)}\` | ${r.timed_out_after_s !== undefined ? `timed out after ${r.timed_out_after_s} s` : r.exit_code} |`,
  );
  return [
    'The tests failed:',
    '',
    '| Command | Exit Code |',
    '| --- | --- |',
    ...rows,
    '',
    'Run the failing commands in the workspace to see their output, then fix the cause.',
  ].join('\n');
}
