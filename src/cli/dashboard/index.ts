// `ii dashboard` (and plain `ii` on a terminal): registration only. The
// dashboard's code (Ink, React, the watcher) is imported when it runs, so
// other commands never load it.
import type { Command } from 'commander';

export function registerDashboardCommand(program: Command): void {
  program
    .command('dashboard')
    .description('the live full-screen kanban of jobs (plain `ii` on a terminal opens it too)')
    .option('--all', 'show the jobs of every repository, not only this one')
    .action(async (opts: { all?: boolean }) => {
      const { loadInProduction } = await import('./production-env.js');
      const { runDashboard } = await loadInProduction(() => import('./run.js'));
      await runDashboard({ all: opts.all === true });
    });
}

/** Plain `ii` with no arguments opens the dashboard when attached to a terminal. */
export function defaultArgv(argv: string[], stdout: { isTTY?: boolean } = process.stdout): string[] {
  return argv.length <= 2 && stdout.isTTY ? [...argv, 'dashboard'] : argv;
}
