// The journal end to end through the built CLI. The job is made through the
// store API and the event log on a real git repository, the way the runner
// records one (test/helpers/journal-job.ts), so this needs no agent.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/journal/schema.js';
import { openStateStore } from '../../src/state/index.js';
import { ii } from '../helpers/cli.js';
import { makeFinishedJob, type MadeJob } from '../helpers/journal-job.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
let stateDir: string;
let made: MadeJob;
beforeEach(() => {
  tmp = tempDir();
  mkdirSync(join(tmp.path, 'repo'));
  repo = gitRepo(join(tmp.path, 'repo'));
  env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: tmp.path };
  stateDir = join(tmp.path, 'state', 'incrementum');
  const store = openStateStore({ dir: stateDir });
  try {
    made = makeFinishedJob(store, stateDir, repo);
  } finally {
    store.close();
  }
});
afterEach(() => tmp.cleanup());
const run = (args: string[]) => ii(args, { cwd: repo, env });

describe('ii job journal / note', () => {
  it("writes a finished job's journal that agrees with its record, and rebuilds it after a note", () => {
    const id = made.job.id;
    const md = run(['job', 'journal', id.slice(0, 5)]);
    expect(md.stderr).toBe('');
    expect(md.code).toBe(0);
    const dir = join(stateDir, 'jobs', id);
    expect(existsSync(join(dir, 'journal.json'))).toBe(true);
    expect(readFileSync(join(dir, 'journal.md'), 'utf8')).toBe(md.stdout);
    expect(md.stdout).toContain(`# Journal of job ${id}`);
    expect(md.stdout).toContain('- State: complete (job completed');
    expect(md.stdout).toContain('## Warnings\n\n*No warnings*\n');
    expect(md.stdout).not.toContain('abc123abc123'); // the token in the test output

    const record = JSON.parse(run(['job', 'show', id, '--json']).stdout) as {
      changes: unknown[];
      status: string;
    };
    const j = Journal.parse(JSON.parse(run(['job', 'journal', id, '--json']).stdout));
    expect(j.status.job_status).toBe(record.status);
    expect(j.milestones.total).toBe(record.changes.length);
    expect(j.checkpoints.list.map((c) => c.sha)).toEqual(made.commits);
    expect(j.notes?.count).toBe(0);

    const note = run(['job', 'note', id, 'looked', 'fine', 'to', 'me']);
    expect(note.code).toBe(0);
    expect(note.stdout).toContain(`Noted on job ${id}`);
    const after = Journal.parse(JSON.parse(run(['job', 'journal', id, '--json']).stdout));
    expect(after.notes).toMatchObject({ count: 1, recent: [{ text: 'looked fine to me' }] });
    expect(readFileSync(join(dir, 'journal.md'), 'utf8')).toContain('looked fine to me');
    expect(Date.parse(after.generated_at)).toBeGreaterThan(Date.parse(j.generated_at));
  });

  it('an unknown job is a usage error that says what to do', () => {
    const r = run(['job', 'journal', 'ffffffff']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ii: /);
    const n = run(['job', 'note', made.job.id]);
    expect(n.code).toBe(2);
  });
});
