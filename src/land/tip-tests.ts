// The rebased tip tested before the target moves: [workspace] setup in the
// landing worktree, then the test commands, both in the job's sandbox.
import { OutputTail, setupWorkspace } from '../job/workspace-setup.js';
import { runTests } from '../job/test-runner.js';
import { groupRecorder } from '../proc/recorded.js';
import { jobSandbox } from '../proc/sandbox/sandbox.js';
import type { LandInput } from './input.js';
import { LandRefused } from './plan.js';

/** [workspace] setup if needed, then the test commands on the rebased tip; red throws. */
export async function testTip(input: LandInput, ws: string, onto: string): Promise<void> {
  const progress = input.onProgress ?? (() => {});
  const { config } = input;
  const recordGroup = groupRecorder(input.store, input.job.id, ws);
  // The tip's setup and tests run in the job's sandbox as its own did.
  const sandbox = jobSandbox({
    config,
    repoRoot: input.repo.root,
    workspace: ws,
    stateDir: input.stateDir,
    agent: { name: '', command: [] },
  });
  const timeoutMs = config.job['test-timeout-seconds'] * 1000;
  const setup = await setupWorkspace({
    workspace: ws,
    checkout: input.repo.root,
    commands: config.workspace.setup,
    reuse: config.workspace.reuse,
    ...(input.signal ? { signal: input.signal } : {}),
    ...(input.nice ? { nice: input.nice } : {}),
    timeoutMs,
    recordGroup,
    sandbox,
    onStart: (command) => progress({ type: 'setup', command }),
  });
  if (setup.kind === 'aborted')
    throw new LandRefused('the landing was interrupted: nothing was moved.', 'aborted');
  if (setup.kind === 'failed')
    throw new LandRefused(
      `the workspace setup failed on the rebased tip (\`${setup.failed.command}\` exited ${setup.failed.exit_code}): ${onto} was not moved.\n${setup.tail}`,
      'tests',
    );
  const tails = new Map<string, OutputTail>();
  const run = await runTests({
    commands: config.job['test-commands'],
    cwd: ws,
    ...(input.signal ? { signal: input.signal } : {}),
    ...(input.nice ? { nice: input.nice } : {}),
    timeoutMs,
    recordGroup,
    sandbox,
    onStart: (command) => {
      tails.set(command, new OutputTail());
      progress({ type: 'test_start', command });
    },
    onOutput: (command, stream, text) => {
      tails.get(command)?.add(text);
      progress({ type: 'test_output', command, stream, text });
    },
    onEnd: (result) => progress({ type: 'test_end', result }),
  });
  if (run.aborted) throw new LandRefused('the landing was interrupted: nothing was moved.', 'aborted');
  if (run.passed) return;
  const failed = run.results.find((r) => r.exit_code !== 0)!;
  const tail = tails.get(failed.command)?.lines() ?? '';
  throw new LandRefused(
    `the tests fail on job ${input.job.id} rebased onto ${onto}: \`${failed.command}\` exited ${failed.exit_code}; ${onto} was not moved.\n` +
      (tail ? `${tail}\n` : '') +
      `Fix it on ${onto} or retry the todo (ii job retry ${input.job.id}); --no-test lands without the tests.`,
    'tests',
  );
}
