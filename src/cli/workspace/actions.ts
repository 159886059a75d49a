// The bodies of ii workspace list | prune (definitions in index.ts).
import { cleanUpDeadRunner, describeCleanup, runnerGoneIn } from '../../job/dead-runner.js';
import { localProbe } from '../../proc/alive.js';
import { isStale } from '../../model/derive.js';
import {
  listWorkspaces,
  pruneChangeRefs,
  pruneWorkspaces,
  removedWorkspaces,
  type WorkspaceInfo,
} from '../../session/workspaces.js';
import { visibleLine } from '../../text/sanitize.js';
import { currentRepo, withStore } from '../context.js';
import { age, formatBytes, printJson, style, table, type Style } from '../format.js';
import type { WorkspaceListOptions } from './options.js';

export async function workspaceList(o: WorkspaceListOptions): Promise<void> {
  const { slug } = currentRepo();
  const { rows, gone } = await withStore(async (s) => {
    const rows = await listWorkspaces(s, slug);
    return { rows, gone: rows.length || o.json ? null : await removedWorkspaces(s, slug) };
  });
  if (o.json) return printJson(rows);
  if (rows.length === 0) {
    process.stdout.write(`${noWorkspaces(gone ?? { removed: 0, landed: 0 })}\n`);
    return;
  }
  process.stdout.write(workspaceTable(rows, style()) + '\n');
}

/** An empty list: none yet, or (when jobs had some) what became of them. */
function noWorkspaces({ removed, landed }: { removed: number; landed: number }): string {
  if (removed === 0) return 'No workspaces yet: ii job do makes one.';
  const their = (n: number) => (n === 1 ? 'its job' : 'their jobs');
  const how =
    landed === removed
      ? `as ${their(removed)} landed`
      : landed === 0
        ? 'by ii workspace prune'
        : `(${landed} as ${their(landed)} landed, the rest by ii workspace prune)`;
  const which = removed === 1 ? 'the one jobs used here was' : `the ${removed} jobs used here were`;
  return `No workspaces now: ${which} removed ${how}. ii job do makes a new one.`;
}

export async function workspacePrune(): Promise<void> {
  const { root, slug } = currentRepo();
  const { removed, kept, refs } = await withStore(async (s) => {
    // A job whose runner is gone still claims its workspace: end it (and what
    // it left running) first, so its workspace is pruned like any finished one.
    const { GitVcs } = await import('../../vcs/git.js');
    const vcs = new GitVcs();
    const { finishSession } = await import('../../session/index.js');
    for (const job of await s.jobs.list(slug, { activeOnly: true })) {
      if (!isStale(job, Date.now(), localProbe) && !(await runnerGoneIn(s, job))) continue;
      const c = await cleanUpDeadRunner(s, s.dir, job, {
        status: 'failed',
        reason: `its runner${job.pid ? ` (pid ${job.pid})` : ''} was gone; ended by ii workspace prune`,
        finishSession: (sessionId) => finishSession(s, sessionId, 'failed', vcs).then(() => {}),
      });
      if (c.endedHere)
        process.stdout.write(`job ${job.id} failed (its runner was gone): ${describeCleanup(c)}.
`);
    }
    const pruned = await pruneWorkspaces(s, { root, slug, stateDir: s.dir }, vcs);
    return { ...pruned, refs: await pruneChangeRefs(s, root, vcs) };
  });
  for (const k of kept)
    process.stdout.write(
      `kept ${k.path}: process${k.pids.length === 1 ? '' : 'es'} ${k.pids.join(', ')} still work${k.pids.length === 1 ? 's' : ''} in it (ps -o pid,args -p ${k.pids.join(',')}); prune again once ${k.pids.length === 1 ? 'it has' : 'they have'} ended\n`,
    );
  for (const p of removed) process.stdout.write(`removed ${p.path} (${p.reason})\n`);
  const freed = removed.reduce((n, p) => n + p.bytes, 0);
  if (removed.length > 0)
    process.stdout.write(
      `Pruned ${removed.length} workspace${removed.length === 1 ? '' : 's'}, freeing ${formatBytes(freed)}.\n`,
    );
  if (refs.length > 0)
    process.stdout.write(
      `Removed the refs of ${refs.length} change${refs.length === 1 ? '' : 's'} no job records (refs/incrementum/changes/<id>/).\n`,
    );
  if (removed.length === 0 && kept.length === 0 && refs.length === 0)
    process.stdout.write('Nothing to prune.\n');
}

function workspaceTable(rows: WorkspaceInfo[], st: Style, now = Date.now()): string {
  return table(
    ['BRANCH', 'STATUS', 'TODO', 'BASE', 'UPDATED', 'PATH'],
    rows.map((w) => [
      visibleLine(w.branch),
      !w.exists ? st.yellow('missing') : w.status === 'acquired' ? st.green('in use') : 'free',
      w.todo_id ?? '',
      w.base_rev ? w.base_rev.slice(0, 10) : 'N/A',
      age(w.updated_at, now),
      visibleLine(w.path),
    ]),
  );
}
