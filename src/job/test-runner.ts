// Runs the user's test commands, one by one, each through a shell in the
// workspace (the only shell incrementum ever starts) and in its own process
// group, so a cancel kills the command and everything it started
// (src/proc/exec-in-group.ts).
import type { TestResult } from '../model/job.js';
import { withoutStoreCredentials } from '../proc/child-env.js';
import { execInGroup } from '../proc/exec-in-group.js';
import type { GroupRecorder } from '../proc/recorded.js';
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
  /** Each command's nice value raised by this much (ii run --land's tests, at [run] nice). */
  nice?: number;
}

export interface TestRun {
  passed: boolean;
  results: TestResult[];
  /** True when the run was cut short by the signal. */
  aborted: boolean;
}

async function runOne(command: string, o: TestRunOptions): Promise<TestResult & { aborted: boolean }> {
  const started = Date.now();
  // Sandboxed or not, a test or setup command (code the agent may have written) never gets the store's credentials.
  const env = withoutStoreCredentials(o.env ?? process.env);
  const run = o.sandbox
    ? o.sandbox.wrap('/bin/sh', ['-c', command], env)
    : { command: '/bin/sh', args: ['-c', command], env };
  const r = await execInGroup(run.command, run.args, {
    cwd: o.cwd,
    env: run.env,
    graceMs: o.killGraceMs ?? 2000,
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.recordGroup ? { record: { recorder: o.recordGroup, label: `test: ${command}` } } : {}),
    onOutput: (stream, text) => o.onOutput?.(command, stream, text),
    ...(o.nice ? { nice: o.nice } : {}),
  });
  if (r.startError !== undefined)
    o.onOutput?.(command, 'stderr', `cannot start the shell: ${r.startError}\n`);
  // A timed-out command fails whatever its shell made of the SIGTERM (124, as timeout(1) has it).
  const timed = r.timedOut && !r.canceled;
  if (timed)
    o.onOutput?.(
      command,
      'stderr',
      `\nincrementum: timed out after ${seconds(o.timeoutMs!)}; it was ended\n`,
    );
  return {
    command,
    exit_code: timed ? 124 : (r.code ?? 127),
    duration_ms: Date.now() - started,
    ...(timed ? { timed_out_after_s: o.timeoutMs! / 1000 } : {}),
    aborted: r.canceled,
  };
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
