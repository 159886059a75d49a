// A runner of ii run's (ii job do --backlog) steps aside once its job's end
// is recorded: ii run hands its slot to the next job at that record, and the
// wrap-up left here (the last snapshot, the workspace's release, the
// journal) must not take the cores that job's start needs. Its nice value is
// read from the hand-over trace (II_TRACE, src/proc/trace.ts), which each
// mark writes with it. A job run by hand keeps its priority to the end.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ii } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';
import { sessionNice, STEP_ASIDE_NICE } from '../../src/proc/priority.js';
import { testEnv } from '../helpers/env.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  tmp = tempDir('ii-step-aside-');
  repo = join(tmp.path, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  gitRepo(repo, {
    'README.md': '# r\n',
    'incrementum.toml':
      '[agent]\npreset = "scripted"\n\n[sandbox]\nmode = "off"\n\n' +
      '[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\n',
  });
  env = testEnv(tmp.path, {
    II_TRACE: join(tmp.path, 'trace.jsonl'),
  });
});
afterEach(() => tmp.cleanup());

/** The nice value at each mark of the runner's trace. */
function niceAt(key: 'nice' | 'session_nice' = 'nice'): Map<string, number | null> {
  const out = new Map<string, number | null>();
  for (const l of readFileSync(env.II_TRACE!, 'utf8').split('\n').filter(Boolean)) {
    const m = JSON.parse(l) as { mark: string; nice: number; session_nice: number | null };
    if (!out.has(m.mark)) out.set(m.mark, m[key]);
  }
  return out;
}

const own = getPriority();

it.skipIf(own + STEP_ASIDE_NICE > 19)(
  "ii run's runner: at its priority to its job's end, then stepped aside for the wrap-up",
  () => {
    const todo = ii(['todo', 'create', '--title', 'anything', '--json'], { cwd: repo, env });
    expect(todo.code, todo.stderr).toBe(0);
    const id = (JSON.parse(todo.stdout) as { id: string }).id;
    const r = ii(['job', 'do', id, '--backlog', '--no-edit'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    const nice = niceAt();
    expect(nice.get('prompt')).toBe(own);
    expect(nice.get('job_end')).toBe(own);
    expect(nice.get('session_finished')).toBe(own + STEP_ASIDE_NICE);
    expect(nice.get('journal_done')).toBe(own + STEP_ASIDE_NICE);
    // Run by hand, its session is the caller's (a terminal's): never lowered with it.
    expect(niceAt('session_nice').get('journal_done')).toBe(sessionNice());
  },
);

it('a job run by hand keeps its priority to the end', () => {
  const r = ii(['job', 'do', '--title', 'anything'], { cwd: repo, env });
  expect(r.code, r.stderr).toBe(0);
  const nice = niceAt();
  expect(nice.get('prompt')).toBe(own);
  expect(nice.get('journal_done')).toBe(own);
});
