// A job's first agent starts early, beside the baseline tests (runner.ts
// startEarly); a job that never runs discards it (discardEarly: ii job do
// failing after its launch). An agent still starting after EARLY_CLOSE_MS
// cannot be closed over ACP: its process group, recorded for the job, is
// ended (endRecordedGroups), or it would run on, unrecorded, to its start
// timeout (a minute) with whatever it started.
import { mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { realDeps } from '../../src/cli/job/deps.js';
import { loadConfig } from '../../src/job/config.js';
import { launchJob } from '../../src/job/launch.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { GIT_IDENTITY } from '../helpers/env.js';
import { isRunning } from '../helpers/procs.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let agentPid = 0;
beforeEach(() => {
  tmp = tempDir('ii-discard-early-');
  for (const [k, v] of Object.entries(GIT_IDENTITY)) vi.stubEnv(k, v);
});
afterEach(() => {
  vi.unstubAllEnvs();
  if (agentPid && isRunning(agentPid)) process.kill(agentPid, 'SIGKILL');
  agentPid = 0;
  tmp.cleanup();
});

/**
 * A repository whose agent never answers initialize (it is still starting when
 * the job ends), its store, and a todo titled `title`; `test` gets them and the
 * file the agent writes its pid to, and the store is closed after it.
 */
async function withStartingAgent(
  title: string,
  test: (s: {
    store: ReturnType<typeof asyncStore>;
    input: Parameters<typeof launchJob>[1];
    pidFile: string;
  }) => Promise<void>,
): Promise<void> {
  const pidFile = join(tmp.path, 'agent.pid');
  const repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  const agent = ['sh', '-c', `echo $$ > ${pidFile}; exec sleep 600`];
  gitRepo(repo, {
    'README.md': '# r\n',
    'incrementum.toml':
      `[agent]\ncommand = ${JSON.stringify(agent)}\n\n[sandbox]\nmode = "off"\n\n` +
      '[job]\ntest-commands = ["true"]\nauto-commit = false\n',
  });
  const root = realpathSync(repo);
  const slug = repoSlug(root);
  const store = asyncStore(openStateStore({ dir: join(tmp.path, 'state', 'incrementum') }));
  try {
    const todo = await store.todos.create(slug, { title });
    await test({
      store,
      input: { store, stateDir: store.dir, repo: { root, slug }, config: loadConfig(root), todo },
      pidFile,
    });
  } finally {
    await store.close();
  }
}

const agentStarted = async (pidFile: string) =>
  Number(await waitFor(() => readFileSync(pidFile, 'utf8').trim(), 'the early agent to start', 30_000));

it('an early agent that never finishes starting is ended with its group when the job is discarded', async () => {
  await withStartingAgent('never run', async ({ store, input, pidFile }) => {
    const launched = await launchJob(await realDeps(), input);
    agentPid = await agentStarted(pidFile);
    expect(isRunning(agentPid)).toBe(true);
    expect(await store.processGroups.list({ job_id: launched.job.id })).not.toEqual([]);

    await launched.runner.discardEarly();

    expect(isRunning(agentPid)).toBe(false);
    expect(await store.processGroups.list({ job_id: launched.job.id })).toEqual([]);
  });
});

it('a stop that comes as the early agent starts (ii job do cancels the runner onRunner gave it) ends the job failed, and the agent with its group', async () => {
  await withStartingAgent('stopped at once', async ({ store, input, pidFile }) => {
    let given: { cancel(o: { status: 'failed'; reason: string }): void } | null = null;
    const launched = await launchJob(await realDeps(), {
      ...input,
      // As ii job do's Ctrl-C handler does, while the job is still being recorded.
      onRunner: (r) => {
        given = r;
        setImmediate(() => r.cancel({ status: 'failed', reason: 'interrupted (SIGINT)' }));
      },
    });
    expect(given).toBe(launched.runner);
    agentPid = await agentStarted(pidFile);
    const job = await launched.runner.run();
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toBe('interrupted (SIGINT)');
    await waitFor(() => !isRunning(agentPid), 'the agent to be ended');
    expect(await store.processGroups.list({ job_id: launched.job.id })).toEqual([]);
  });
});
