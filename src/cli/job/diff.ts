// The body of ii job diff (definition in index.ts): one iteration against the
// previous one, or any two iterations.
import { UserError } from '../../errors.js';
import { loadIterationDiff, locateIteration, locateIterationPair } from '../../history/iteration-diff.js';
import { redactDeep } from '../../text/redact.js';
import { configOrDefaults } from '../config-or-defaults.js';
import { currentRepo, withStore } from '../context.js';
import { printJson, style } from '../format.js';
import { renderIterationDiff } from './diff-view.js';
import type { DiffOptions } from './options.js';

export async function jobDiff(id: string, o: DiffOptions): Promise<void> {
  if ((o.from !== undefined || o.to !== undefined) && (o.change !== undefined || o.iteration !== undefined))
    throw new UserError('give either --change/--iteration or --from/--to, not both.');
  const repo = currentRepo();
  const job = await withStore(async (s) => await s.jobs.resolve(repo.slug, id));
  const last = () => {
    const r = locateIteration(job);
    return `${r.change}.${r.iteration}`;
  };
  const ref =
    o.from !== undefined || o.to !== undefined
      ? locateIterationPair(job, o.from ?? last(), o.to ?? last())
      : locateIteration(job, o.change, o.iteration);
  const [{ GitVcs }, { fetchJobCommits, jobFetchRemote }] = await Promise.all([
    import('../../vcs/git.js'),
    import('../../history/fetch-job.js'),
  ]);
  // Reads the user's checkout (its .git may be a submodule's link): no workspace link to check.
  const vcs = new GitVcs({ checkLinks: false });
  // A job run on another machine: its refs come from the shared remote first.
  await fetchJobCommits(
    vcs,
    repo.root,
    job,
    [ref.fromCommit, ref.commit.commit_id],
    () => jobFetchRemote(configOrDefaults(repo.root, 'ii job diff'), job, repo.root),
    (remote) => process.stderr.write(`fetching job ${job.id}'s refs from the remote ${remote.name}…\n`),
  );
  const d = await loadIterationDiff(vcs, job, ref, [repo.root], {
    recompute: o.recompute === true,
  });
  if (o.json) return printJson(redactDeep(d));
  process.stdout.write(renderIterationDiff(d, d.diff, d.diff_error, style()) + '\n');
}
