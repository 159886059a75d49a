// What the board's `m` asks before landing (landPlan): a target branch git is
// in the middle of a rebase on is refused there, before anyone says yes, and
// once the rebase is finished the plan is made as before. A real repository
// and a job made through the store API.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { landPlan, LandRefused } from '../../src/land/plan.js';
import { Config } from '../../src/model/config.js';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { makeFinishedJob, type MadeJob } from '../helpers/journal-job.js';
import { GitVcs } from '../../src/vcs/git.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
let root: string;
let made: MadeJob;

beforeEach(() => {
  tmp = tempDir('ii-plan-busy-');
  const stateDir = join(tmp.path, 'state', 'incrementum');
  store = openStateStore({ dir: stateDir });
  root = join(tmp.path, 'repo');
  mkdirSync(root);
  gitRepo(root);
  made = makeFinishedJob(store, stateDir, root);
  store.jobs.setBaseBranch(made.job.id, 'main');
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

describe('landPlan on a busy branch', () => {
  it('refuses while main is being rebased, and plans once the rebase is finished', async () => {
    writeFileSync(join(root, 'other.txt'), 'other\n');
    git('add', 'other.txt');
    git('commit', '-qm', 'other');
    const r = spawnSync('git', ['rebase', '-i', 'HEAD~1'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, GIT_SEQUENCE_EDITOR: "sed -i -e 's/^pick/edit/'" },
    });
    expect(r.status, r.stderr).toBe(0);
    const input = () => ({
      repo: { root, slug: repoSlug(root) },
      config: Config.parse({}),
      job: store.jobs.get(made.job.id)!,
      vcs: new GitVcs(),
    });
    const err = await landPlan(input()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LandRefused);
    expect((err as LandRefused).kind).toBe('busy');
    expect((err as Error).message).toBe(
      `main is in the middle of a rebase in ${root}, so nothing was changed: finish the rebase there (git rebase --continue) or abort it (git rebase --abort), then run ii job land ${made.job.id} again.`,
    );
    execFileSync('git', ['rebase', '--continue'], { cwd: root, env: { ...process.env, GIT_EDITOR: 'true' } });
    const plan = await landPlan(input());
    expect(plan.onto).toBe('main');
    expect(plan.subjects).toEqual(['feat: change 1', 'feat: change 2']);
  });
});
