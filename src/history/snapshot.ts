// Before/after snapshots of an iteration (the seed ADR): the job's stage and
// status, the files the change has touched so far, the job's usage and how
// many iteration commits exist. Pure: the caller supplies the file list.
import type { FileChange, IterationSnapshot, Job } from '../model/job.js';
import type { FileStat } from '../vcs/vcs.js';

/** The change's files so far, as a Vcs file list or the model's FileChange list. */
export type SnapshotFiles = Pick<FileStat, 'path' | 'status'>[];

/** A Vcs file list as the model's, each path also absolute under `root` (the workspace). */
export function statsToFileChanges(files: FileStat[], root: string): FileChange[] {
  const dir = root.replace(/\/+$/, '');
  return files.map((f) => ({
    path: f.path,
    abs_path: `${dir}/${f.path}`,
    is_new: f.status === 'added',
    is_deleted: f.status === 'removed',
    additions: f.additions,
    deletions: f.deletions,
  }));
}

/** Iteration commits recorded in the job, over all its changes. */
export const artifactCount = (job: Pick<Job, 'changes'>): number =>
  job.changes.reduce((n, c) => n + c.commits.length, 0);

export function takeSnapshot(
  job: Pick<Job, 'stage' | 'status' | 'usage' | 'changes'>,
  files: SnapshotFiles,
  at: Date = new Date(),
): IterationSnapshot {
  const pick = (s: FileStat['status']) =>
    files
      .filter((f) => f.status === s)
      .map((f) => f.path)
      .sort();
  return {
    stage: job.stage,
    status: job.status,
    files_created: pick('added'),
    files_modified: pick('modified'),
    files_removed: pick('removed'),
    usage: { ...job.usage },
    artifact_count: artifactCount(job),
    taken_at: at.toISOString(),
  };
}
