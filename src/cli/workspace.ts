// ii workspace list | prune
import type { Command } from 'commander';
import { listWorkspaces, pruneWorkspaces, type WorkspaceInfo } from '../session/workspaces.js';
import { currentRepo, withStore } from './context.js';
import { age, printJson, style, table, type Style } from './format.js';

export function registerWorkspaceCommands(program: Command): void {
  const ws = program
    .command('workspace')
    .description("the git worktrees jobs run in (never the user's checkout)");

  ws.command('list')
    .description('list the workspaces of this repository')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const { slug } = currentRepo();
      const rows = await withStore((s) => listWorkspaces(s, slug));
      if (o.json) return printJson(rows);
      if (rows.length === 0) {
        process.stdout.write('No workspaces yet: ii job do makes one.\n');
        return;
      }
      process.stdout.write(workspaceTable(rows, style()) + '\n');
    });

  ws.command('prune')
    .description(
      'remove workspaces of finished sessions and orphans (kept: active workspaces, your checkout, every iteration commit)',
    )
    .action(async () => {
      const { root, slug } = currentRepo();
      const pruned = await withStore((s) => pruneWorkspaces(s, { root, slug, stateDir: s.dir }));
      if (pruned.length === 0) {
        process.stdout.write('Nothing to prune.\n');
        return;
      }
      for (const p of pruned) process.stdout.write(`removed ${p.path} (${p.reason})\n`);
      process.stdout.write(`Pruned ${pruned.length} workspace${pruned.length === 1 ? '' : 's'}.\n`);
    });
}

function workspaceTable(rows: WorkspaceInfo[], st: Style, now = Date.now()): string {
  return table(
    ['BRANCH', 'STATUS', 'TODO', 'BASE', 'UPDATED', 'PATH'],
    rows.map((w) => [
      w.branch,
      !w.exists ? st.yellow('missing') : w.status === 'acquired' ? st.green('in use') : 'free',
      w.todo_id ?? '',
      w.base_rev ? w.base_rev.slice(0, 10) : 'N/A',
      age(w.updated_at, now),
      w.path,
    ]),
  );
}
