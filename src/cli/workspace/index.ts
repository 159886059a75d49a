// ii workspace list | prune: definitions only; the bodies are in
// actions.ts, imported when one runs.
import type { Command } from 'commander';
import type { WorkspaceListOptions } from './options.js';

export function registerWorkspaceCommands(program: Command): void {
  const ws = program
    .command('workspace')
    .description("the git worktrees jobs run in (never the user's checkout)");
  const actions = () => import('./actions.js');

  ws.command('list')
    .description('list the workspaces of this repository')
    .option('--json', 'print JSON')
    .action(async (o: WorkspaceListOptions) => (await actions()).workspaceList(o));

  ws.command('prune')
    .description(
      'remove workspaces of finished sessions (and of ended jobs whose killed runner left theirs open) and orphans, and say how much disk that freed (kept: active workspaces, your checkout, every iteration commit)',
    )
    .action(async () => (await actions()).workspacePrune());
}
