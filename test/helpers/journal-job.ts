// A job made the way the runner makes one, through the store API and the
// event log, on a real git repository: two accepted changes (the first one
// after a failed test run), committed on a work branch. Used where a finished
// job is needed without an agent.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Job } from '../../src/model/job.js';
import type { StateStore } from '../../src/state/api.js';
import { appendEvent } from '../../src/state/events.js';
import { repoSlug } from '../../src/state/paths.js';

export interface MadeJob {
  job: Job;
  base: string;
  commits: string[];
}

const review = (outcome: 'ACCEPT' | 'REQUEST_CHANGES') => ({
  outcome,
  comments: '',
  agent_session_id: null,
  reviewed_at: new Date().toISOString(),
});

export function makeFinishedJob(store: StateStore, stateDir: string, root: string): MadeJob {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  const base = git('rev-parse', 'HEAD');
  const slug = repoSlug(root);
  const todo = store.todos.create(slug, { title: 'Greet the world', description: 'Add hello.txt' });
  const job = store.jobs.create(slug, { todo_id: todo.id, base_rev: base, workspace_path: root });
  const log = (type: Parameters<typeof appendEvent>[2], data: Record<string, unknown> = {}) =>
    appendEvent(stateDir, job.id, type, data);

  git('checkout', '-q', '-b', `ii/${job.id}`);
  const commits: string[] = [];
  const change = (n: number, file: string, body: string, failFirst: boolean) => {
    store.jobs.addAgentSession(job.id, { purpose: 'implement', id: `impl${n}`, transcript: '/dev/null' });
    store.jobs.appendChange(job.id, `Ichange${n}`);
    log('stage', { from: 'implementing', to: 'testing' });
    if (failFirst) {
      store.jobs.appendCommit(job.id, { commit_id: `draft${n}` });
      log('test_start', { command: 'sh test.sh' });
      log('test_output', {
        command: 'sh test.sh',
        stream: 'stderr',
        text: 'hello.txt is missing\nAPI_TOKEN=abc123abc123\n',
      });
      log('test_end', { command: 'sh test.sh', exit_code: 1, duration_ms: 20 });
      store.jobs.updateCurrentCommit(job.id, {
        tests_passed: false,
        test_results: [{ command: 'sh test.sh', exit_code: 1, duration_ms: 20 }],
      });
      log('stage', { from: 'testing', to: 'implementing' });
    }
    writeFileSync(join(root, file), body);
    git('add', '-A');
    git('commit', '-qm', `feat: change ${n}`);
    const sha = git('rev-parse', 'HEAD');
    store.jobs.appendCommit(job.id, { commit_id: sha });
    log('test_start', { command: 'sh test.sh' });
    log('test_output', { command: 'sh test.sh', stream: 'stdout', text: 'ok\n' });
    log('test_end', { command: 'sh test.sh', exit_code: 0, duration_ms: 10 });
    store.jobs.updateCurrentCommit(job.id, {
      tests_passed: true,
      test_results: [{ command: 'sh test.sh', exit_code: 0, duration_ms: 10 }],
      review: review('ACCEPT'),
      usage: { input_tokens: 100, output_tokens: 10, cost: 0.01 },
    });
    store.jobs.addUsage(job.id, { input_tokens: 100, output_tokens: 10, cost: 0.01 });
    log('info', { message: `committed ${sha}`, commit_id: sha, change_id: `Ichange${n}` });
    commits.push(sha);
  };
  change(1, 'hello.txt', 'hello\nworld\n', true);
  change(2, 'notes.md', '# notes\n', false);
  git('checkout', '-q', 'main');
  store.jobs.setProjectReview(job.id, review('ACCEPT'));
  log('stage', { status: 'completed' });
  const done = store.jobs.finish(job.id, 'completed');
  return { job: done, base, commits };
}
