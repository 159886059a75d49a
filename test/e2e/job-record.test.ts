// What a finished `ii job do` leaves on record, end to end (the built CLI, a
// real git repo, the scripted ACP agent): the final commit a user merges, the
// usage each agent session reported, as `ii job show` and the journal tell it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/journal/schema.js';
import { openStateStore } from '../../src/state/index.js';
import { JobFixture, jobIdFrom, promptsSent, write } from '../helpers/job.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-record-');
});
afterEach(() => f.cleanup());

interface Usage {
  input_tokens: number;
  output_tokens: number;
  cost: number;
}
interface RecordJson {
  usage: Usage;
  changes: { change_id: string; commits: { commit_id: string; iteration_commit_id: string | null }[] }[];
  agent_sessions: { purpose: string; id: string; usage?: Usage }[];
}

const showJson = (id: string) => JSON.parse(f.run(['job', 'show', id, '--json']).stdout) as RecordJson;
const journal = (id: string) => Journal.parse(JSON.parse(f.run(['job', 'journal', id, '--json']).stdout));
const usage = (input_tokens: number, output_tokens: number, cost: number) => ({
  input_tokens,
  output_tokens,
  cost,
});

describe('the final commit', () => {
  it('is the commit on record: job show (json and text) and the journal name what job do printed', () => {
    f.setup();
    const s = f.scenario('accept', {
      implement: [{ actions: [write('hello.txt', 'hi\n')] }],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Add hello.txt' }] }],
    });
    const r = f.run(['job', 'do', '--title', 'say hello'], s);
    expect(r.code).toBe(0);
    const printed = r.stdout.trim();
    expect(printed).toMatch(/^[0-9a-f]{40}$/);
    const id = jobIdFrom(r.stderr);
    const job = showJson(id);
    // The change the last pass left (nothing more to do) has no commit: the
    // final commit is the first change's.
    const last = job.changes[0]!.commits.at(-1)!;
    expect(last.commit_id).toBe(printed);
    expect(f.git('cat-file', '-t', last.commit_id).trim()).toBe('commit');
    // The iteration's own commit is kept beside it: the iteration ref points there.
    expect(last.iteration_commit_id).toMatch(/^[0-9a-f]{40}$/);
    expect(last.iteration_commit_id).not.toBe(printed);
    const change = job.changes[0]!.change_id;
    expect(f.git('rev-parse', `refs/incrementum/changes/${change}/1`).trim()).toBe(last.iteration_commit_id);
    expect(f.git('log', '-1', '--format=%B', printed)).toContain('Add hello.txt');

    expect(f.run(['job', 'show', id]).stdout).toContain(printed.slice(0, 10));
    const j = journal(id);
    expect(j.head_sha).toBe(printed);
    // The diff of the accepted iteration still works from the record.
    const d = f.run(['job', 'diff', id]);
    expect(d.code).toBe(0);
    expect(d.stdout).toContain('+hi');
  });
});

describe('usage per agent session', () => {
  it('every session records what its agent reported, shown per stage by job show and the journal', () => {
    f.setup();
    const s = f.scenario('usage', {
      implement: [{ actions: [write('a.txt', 'a\n')], usage: usage(1000, 200, 0.0117) }],
      review: [{ actions: [{ type: 'feedback', verdict: 'ACCEPT' }], usage: usage(800, 50, 0.0117) }],
      'commit-message': [
        { actions: [{ type: 'commit_message', text: 'Add a' }], usage: usage(300, 20, 0.0021) },
      ],
      // The implement pass after the change, which changes nothing, and the project review
      // report the scripted agent's own estimate.
    });
    const r = f.run(['job', 'do', '--title', 'add a'], s);
    expect(r.code).toBe(0);
    const id = jobIdFrom(r.stderr);
    const job = showJson(id);
    expect(job.agent_sessions.map((a) => a.purpose)).toEqual([
      'implement',
      'review',
      'commit-message',
      'implement',
      'project-review',
    ]);
    for (const a of job.agent_sessions) {
      expect(a.usage, `${a.purpose} session ${a.id}`).toBeDefined();
      expect(a.usage!.input_tokens).toBeGreaterThan(0);
      expect(a.usage!.output_tokens).toBeGreaterThan(0);
      expect(a.usage!.cost).toBeGreaterThan(0);
    }
    expect(job.agent_sessions[0]!.usage).toEqual(usage(1000, 200, 0.0117));
    expect(job.agent_sessions[1]!.usage).toEqual(usage(800, 50, 0.0117));
    // The total is the sessions' sum, in whole micro-dollars (no 0.023399999999999997).
    const sum = job.agent_sessions.reduce((n, a) => n + Math.round(a.usage!.cost * 1e6), 0);
    expect(job.usage.cost).toBe(sum / 1e6);
    expect(JSON.stringify(job.usage)).not.toMatch(/\d{9,}/);

    const j = journal(id);
    expect(j.sources.usage).toBe('job record (5 of 5 agent sessions recorded their own usage)');
    for (const stage of ['implement', 'review', 'commit-message', 'project-review'] as const) {
      const u = j.usage.by_stage[stage];
      expect(u, stage).toBeDefined();
      expect(u!.input_tokens).toBeGreaterThan(0);
      expect(u!.cost).toBeGreaterThan(0);
    }
    expect(j.usage.by_stage.review).toEqual({ ...usage(800, 50, 0.0117), sessions: 1 });
    expect(j.usage.unattributed).toEqual(usage(0, 0, 0));
    const md = f.run(['job', 'journal', id]).stdout;
    expect(md).toContain('- review (1 session): 800 in / 50 out, $0.0117');

    const text = f.run(['job', 'show', id]).stdout;
    expect(text).toMatch(/^ {4}review +800 in \/ 50 out tokens, \$0\.0117 {2}\(1 session\)$/m);
    expect(text).toMatch(/^ {4}commit-message +300 in \/ 20 out tokens, \$0\.0021 {2}\(1 session\)$/m);
    expect(text).toMatch(/^ {4}implement +\d+ in \/ \d+ out tokens, \$\d+\.\d{4} {2}\(2 sessions\)$/m);
    expect(text).toMatch(/^ {4}project-review +\d+ in/m);
  });
});

describe('ii job do at the start', () => {
  // job-subcommand spec, Commands > `ii job do`, step 4: the session is made
  // "using a topic that includes the job id": our session's topic, and each
  // agent session's title, so the agent's own session list leads to the job.
  it("the session's topic and every agent session's title name the job", () => {
    f.setup();
    const s = f.scenario('titled', { implement: [{ actions: [write('hello.txt', 'hi\n')] }] });
    const r = f.run(['job', 'do', '--title', 'say hello'], s);
    expect(r.code, r.stderr).toBe(0);
    const id = jobIdFrom(r.stderr);
    const job = f.show(id);
    const titles = job.agent_sessions.map((a) =>
      readFileSync(a.transcript, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { message?: { method?: string; params?: { title?: string } } }).message)
        .filter((m) => m?.method === 'session/set_title')
        .map((m) => m!.params!.title),
    );
    expect(titles).toEqual(job.agent_sessions.map((a) => [`ii job ${id} ${a.purpose}: say hello`]));
    expect(job.agent_sessions.map((a) => a.purpose)).toContain('review');
    const store = openStateStore({ dir: join(f.env.XDG_STATE_HOME!, 'incrementum') });
    try {
      expect(store.sessions.get(job.session_id)?.topic).toBe(`job ${id}: say hello`);
    } finally {
      store.close();
    }
  });

  it('prints the workspace, the session, the change and the whole todo before the first stage', () => {
    f.setup();
    const s = f.scenario('ctx', { implement: [{ actions: [write('a.txt', 'a\n')] }] });
    const r = f.run(
      [
        'job',
        'do',
        '--title',
        'fix the parser',
        '--type',
        'bug',
        '--priority',
        '1',
        '--desc',
        'It chokes on tabs.\n\nSee issue 12.',
      ],
      s,
    );
    expect(r.code).toBe(0);
    const id = jobIdFrom(r.stderr);
    const job = JSON.parse(f.run(['job', 'show', id, '--json']).stdout) as {
      session_id: string;
      workspace_path: string;
      todo_id: string;
      changes: { change_id: string }[];
    };
    const head = r.stderr.slice(0, r.stderr.indexOf('→ implementing'));
    const ws = (
      JSON.parse(f.run(['workspace', 'list', '--json']).stdout) as { path: string; branch: string }[]
    ).find((w) => w.path === job.workspace_path)!;
    expect(head).toContain(`  workspace: ${ws.branch}  ${job.workspace_path}  at `);
    expect(head).toContain(`  session:   ${job.session_id}`);
    expect(head).toContain(`  change:    ${job.changes[0]!.change_id}`);
    expect(head).toContain(`  todo:      ${job.todo_id}`);
    expect(head).toContain('    title:       fix the parser');
    expect(head).toContain('    type:        bug');
    expect(head).toContain('    priority:    1');
    expect(head).toContain('    description:\n      It chokes on tabs.\n\n      See issue 12.');
  });
});

describe('the auto-commit prompt', () => {
  it('gives the agent the files and a summary of the iteration (its own closing message)', () => {
    f.setup();
    const s = f.scenario('autocommit', {
      implement: [
        {
          actions: [
            write('hello.txt', 'hi\n'),
            { type: 'message', text: 'Added hello.txt, which greets the reader.' },
          ],
        },
      ],
    });
    const r = f.run(['job', 'do', '--title', 'say hello', '--auto-commit'], s);
    expect(r.code).toBe(0);
    const job = JSON.parse(f.run(['job', 'show', jobIdFrom(r.stderr), '--json']).stdout) as {
      agent_sessions: { purpose: string; transcript: string }[];
    };
    const prompts = promptsSent(job.agent_sessions[0]!.transcript);
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toContain('- hello.txt (new file)');
    expect(prompts[1]).toContain(
      '# Summary of this iteration\n\nAdded hello.txt, which greets the reader.\n',
    );
  });
});

describe('old template overrides', () => {
  it('a .incrementum/prompts/*.tmpl file is named in a warning with where it belongs now', () => {
    f.setup();
    mkdirSync(join(f.repo, '.incrementum', 'prompts'), { recursive: true });
    writeFileSync(join(f.repo, '.incrementum', 'prompts', 'review.tmpl'), 'Review {{.Todo.Title}}\n');
    writeFileSync(join(f.repo, '.incrementum', 'prompts', 'notes.tmpl'), 'x\n');
    const r = f.run(['job', 'do', '--title', 'nothing to do']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'warning: .incrementum/prompts/review.tmpl is not used: template overrides now live in .incrementum/templates/ and use Liquid. ' +
        'Move it to .incrementum/templates/review.liquid',
    );
    expect(r.stderr).toContain('warning: .incrementum/prompts/notes.tmpl is not used');
    // The warning is in the job's event log too, where ii job logs and the journal find it.
    const events = readFileSync(
      join(f.env.XDG_STATE_HOME!, 'incrementum', 'jobs', jobIdFrom(r.stderr), 'events.jsonl'),
      'utf8',
    );
    expect(events).toContain('prompts/review.tmpl is not used');
  });
});
