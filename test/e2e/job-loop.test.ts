// The rest of the job loop end to end (job-do.test.ts has the first paths):
// several changes, the project review asking for more, the failure table in
// the next prompt, an agent that crashes or hangs, Ctrl-C and an abandon
// request in every stage, and the change cap. The built CLI, real git, the
// scripted ACP agent as a real child process.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { delay, JobFixture, jobIdFrom, promptsSent, verdict, write } from '../helpers/job.js';
import { runningIn } from '../helpers/procs.js';
import { waitFor } from '../helpers/tmp.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-jobloop-');
});
afterEach(() => f.cleanup());

/** Nothing runs in the temp dir any more: no agent, no test command, no runner. */
const nothingLeft = () => waitFor(() => runningIn(f.tmp.path).length === 0, 'no process of the job left');

describe('ii job do: the loop', () => {
  it('two changes, then the project review accepts: two recorded changes, both in the final history', () => {
    f.setup();
    const s = f.scenario('two', {
      implement: [{ actions: [write('a.txt', 'a\n')] }, { actions: [write('b.txt', 'b\n')] }],
    });
    const r = f.run(['job', 'do', '--title', 'a then b'], s);
    expect(r.code).toBe(0);
    // The change the last pass left empty is no change made.
    expect(r.stderr).toMatch(/completed · 2 changes · final commit [0-9a-f]{40}/);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('completed');
    // The last pass found nothing to change: its change stays on the record
    // with no commit (job-change-tracking.md, Implementing Stage).
    expect(job.changes.map((c) => c.commits.map((k) => k.files.map((x) => x.path)))).toEqual([
      [['a.txt']],
      [['b.txt']],
      [],
    ]);
    expect(job.changes[0]!.change_id).not.toBe(job.changes[1]!.change_id);
    expect(job.project_review?.outcome).toBe('ACCEPT');
    expect(job.agent_sessions.map((a) => a.purpose)).toEqual([
      'implement',
      'review',
      'commit-message',
      'implement',
      'review',
      'commit-message',
      'implement',
      'project-review',
    ]);
    // The final commit sits on top of the first change's: both reach the user.
    const log = f.git('log', '--format=%B%x00', `${job.base_rev}..${r.stdout.trim()}`).split('\0');
    const ids = job.changes.map((c) => c.change_id);
    expect(log.filter((m) => m.includes(`Change-Id: ${ids[0]}`))).toHaveLength(1);
    expect(log.filter((m) => m.includes(`Change-Id: ${ids[1]}`))).toHaveLength(1);
    expect(f.git('ls-tree', '--name-only', r.stdout.trim())).toMatch(/a\.txt[\s\S]*b\.txt/);
  });

  it('the project review requests changes: a new change carries its comments, then it accepts', () => {
    f.setup();
    const s = f.scenario('project-rc', {
      implement: [
        { actions: [write('a.txt', 'a\n')] },
        { actions: [] },
        { actions: [write('docs.md', 'how to use a\n')] },
      ],
      'project-review': [
        verdict('REQUEST_CHANGES', 'Undocumented.\n\nDocument a.txt in docs.md.'),
        verdict('ACCEPT', 'good'),
      ],
    });
    const r = f.run(['job', 'do', '--title', 'a, documented'], s);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('project review: REQUEST_CHANGES');
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('completed');
    // The empty pass's change is the one the requested work goes into; the
    // last pass's stays with no commit.
    expect(job.changes.map((c) => c.commits.length)).toEqual([1, 1, 0]);
    const second = job.changes[1]!.commits[0]!;
    expect(second.files.map((x) => x.path)).toEqual(['docs.md']);
    expect(second.feedback).toContain('Document a.txt in docs.md.');
    expect(job.project_review?.outcome).toBe('ACCEPT');
    // The implement prompt that made the second change was given the comments.
    const implement = job.agent_sessions.filter((a) => a.purpose === 'implement');
    expect(implement).toHaveLength(4);
    expect(promptsSent(implement[2]!.transcript).join('\n')).toContain('Document a.txt in docs.md.');
    expect(promptsSent(implement[0]!.transcript).join('\n')).not.toContain('Document a.txt');
  });

  it('failing tests: the markdown table is in the next implement prompt the agent gets', () => {
    f.setup(['grep -q fixed a.txt', 'test -f README.md'], { job: 'baseline-tests = false\n' });
    const s = f.scenario('table', {
      implement: [{ actions: [write('a.txt', 'broken\n')] }, { actions: [write('a.txt', 'fixed\n')] }],
    });
    const r = f.run(['job', 'do', '--title', 'fix it'], s);
    expect(r.code).toBe(0);
    const job = f.show(jobIdFrom(r.stderr));
    const implement = job.agent_sessions.filter((a) => a.purpose === 'implement');
    const first = promptsSent(implement[0]!.transcript).join('\n');
    const second = promptsSent(implement[1]!.transcript).join('\n');
    expect(first).not.toContain('| Command | Exit Code |');
    expect(second).toContain(
      '| Command | Exit Code |\n| --- | --- |\n| `grep -q fixed a.txt` | 1 |\n| `test -f README.md` | 0 |',
    );
  });

  it('the agent crashes: failed with a reason naming the crash, nothing left running', async () => {
    f.setup();
    const s = f.scenario('crash', {
      implement: [{ actions: [write('a.txt', 'a\n'), { type: 'crash', code: 7 }] }],
    });
    const r = f.run(['job', 'do', '--title', 'crash'], s);
    expect(r.code).toBe(1);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toMatch(/implement agent.*exited with code 7/);
    expect(job.failure_reason).toContain('crashing on purpose');
    expect(r.stderr).toContain('exited with code 7');
    // What the agent wrote on stderr is in its log, where it wrote it.
    expect(f.run(['job', 'logs', job.id]).stdout).toContain(
      '  stderr: scripted agent: crashing on purpose (exit 7)',
    );
    await nothingLeft();
    expect(f.todos('open')).toHaveLength(1);
  });

  it('the agent hangs past [agent] turn-timeout-seconds: failed with the timeout reason, nothing left', async () => {
    // The hanging agent ignores cancel, EOF and SIGTERM: only SIGKILL ends it.
    f.setup(['true'], { agent: 'preset = "scripted"\nturn-timeout-seconds = 4\n' });
    const s = f.scenario('hang', { implement: [{ actions: [{ type: 'hang' }] }] });
    const r = f.run(['job', 'do', '--title', 'hang'], s);
    expect(r.code).toBe(1);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toMatch(/longer than 4 ?s.*turn-timeout-seconds/);
    await nothingLeft();
    expect(f.workspaces().every((w) => w.status === 'free')).toBe(true);
  });

  it('the change cap: a second change with max-changes = 1 fails the job and says which key', () => {
    f.setup(['true'], { job: 'max-changes = 1\n' });
    const s = f.scenario('cap', {
      implement: [{ actions: [write('a.txt', 'a\n')] }, { actions: [write('b.txt', 'b\n')] }],
    });
    const r = f.run(['job', 'do', '--title', 'too much'], s);
    expect(r.code).toBe(1);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toMatch(/change 2.*only 1.*max-changes = 1/);
    expect(r.stderr).toContain('max-changes');
    // Change 2 was started (on the record, with no commit), never committed.
    expect(job.changes.map((c) => c.commits.length)).toEqual([1, 0]);
  });

  it('the change cap also stops a project review that asks for more than the job may make', () => {
    f.setup(['true'], { job: 'max-changes = 1\n' });
    const s = f.scenario('cap-project', {
      implement: [{ actions: [write('a.txt', 'a\n')] }],
      'project-review': [verdict('REQUEST_CHANGES', 'More.\n\nAnd b.txt too.')],
    });
    const r = f.run(['job', 'do', '--title', 'more please'], s);
    expect(r.code).toBe(1);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.failure_reason).toMatch(/project review requested more changes.*max-changes = 1/);
    expect(job.project_review?.outcome).toBe('REQUEST_CHANGES');
  });
});

// One scenario per stage that keeps the job in that stage: a slow test
// command for testing, a long agent turn for the others.
const SLOW = 60_000;
const STAGES: { stage: string; line: string; tests: string[]; turns: Record<string, unknown[]> }[] = [
  {
    stage: 'testing',
    line: '→ testing',
    // Quick on the untouched base (the baseline run), slow once the agent wrote a.txt.
    tests: ['test ! -f a.txt || sleep 30'],
    turns: { implement: [{ actions: [write('a.txt', 'a\n')] }] },
  },
  {
    stage: 'reviewing',
    line: '→ reviewing',
    tests: ['true'],
    turns: { implement: [{ actions: [write('a.txt', 'a\n')] }], review: [delay(SLOW)] },
  },
  {
    stage: 'committing',
    line: '→ committing',
    tests: ['true'],
    turns: { implement: [{ actions: [write('a.txt', 'a\n')] }], 'commit-message': [delay(SLOW)] },
  },
  {
    stage: 'project review',
    line: '→ project review',
    tests: ['true'],
    turns: { implement: [{ actions: [] }], 'project-review': [delay(SLOW)] },
  },
];

describe('ii job do: stopped in each stage', () => {
  for (const st of STAGES) {
    it(`Ctrl-C while ${st.stage}: failed, workspace free, todo reopened, nothing left running`, async () => {
      f.setup(st.tests);
      const s = f.scenario('sigint', st.turns);
      const job = f.spawn(['job', 'do', '--title', `stop in ${st.stage}`], s);
      await waitFor(() => job.stderr().includes(st.line), `the ${st.stage} stage`);
      // In the stage for real: its test command or agent is running.
      await waitFor(() => runningIn(f.tmp.path).length > 1, 'the stage to start its work');
      job.child.kill('SIGINT');
      expect(await job.exit).toBe(1);
      const id = jobIdFrom(job.stderr());
      const rec = f.show(id);
      expect(rec.status).toBe('failed');
      expect(rec.failure_reason).toMatch(/interrupted \(SIGINT\)/);
      expect(job.stderr()).toContain(`job ${id} failed`);
      await nothingLeft();
      const ws = f.workspaces();
      expect(ws.length).toBeGreaterThan(0);
      expect(ws.every((w) => w.status === 'free')).toBe(true);
      expect(f.todos('open')).toHaveLength(1);
    });
  }

  for (const st of STAGES.filter((x) => x.stage !== 'committing')) {
    it(`an abandon request while ${st.stage} is honoured within seconds`, async () => {
      f.setup(st.tests);
      const s = f.scenario('abandon', st.turns);
      const job = f.spawn(['job', 'do', '--title', `abandon in ${st.stage}`], s);
      await waitFor(() => job.stderr().includes(st.line), `the ${st.stage} stage`);
      await waitFor(() => runningIn(f.tmp.path).length > 1, 'the stage to start its work');
      const id = jobIdFrom(job.stderr());
      const a = f.run(['job', 'abandon', id, '--reason', 'not needed']);
      expect(a.code).toBe(0);
      // The design promises 2 s; the bound leaves room for a loaded machine.
      await waitFor(() => f.show(id).status === 'abandoned', 'the job to be abandoned', 5000);
      expect(await job.exit).toBe(1);
      expect(f.show(id).failure_reason).toBe('not needed');
      await nothingLeft();
      expect(f.workspaces().every((w) => w.status === 'free')).toBe(true);
      expect(f.todos('open')).toHaveLength(1);
    });
  }
});
