// ii demo: see incrementum work in a minute, with no agent account.
import type { Command } from 'commander';
import { UserError } from '../../errors.js';
import { keepRunningWithoutOutput } from '../output.js';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'run a few jobs on the built-in scripted agent in a throwaway repository, with the dashboard open on them (a terminal) or their progress printed (otherwise)',
    )
    .option('--keep', 'keep the demo repository and its state, and print where they are')
    .option('--no-dashboard', 'print progress instead of opening the dashboard, even on a terminal')
    .option('--pace <factor>', "stretch the scripted agent's pauses (0 = as fast as possible)", (v) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0) throw new UserError('--pace is a number ≥ 0.');
      return n;
    })
    .action(async (o: { keep?: boolean; dashboard: boolean; pace?: number }) => {
      const { runDemo } = await import('./run.js');
      const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY);
      const dashboard = o.dashboard && tty;
      // `ii demo | head`: once nobody reads, the demo stops its jobs and
      // removes its folder instead of dying on the closed pipe with them running.
      const lost = new AbortController();
      keepRunningWithoutOutput(() => lost.abort());
      const r = await runDemo({
        keep: Boolean(o.keep),
        dashboard,
        pace: o.pace ?? (dashboard ? 1 : 0),
        signal: lost.signal,
      });
      // Quitting (q, Ctrl-C) or a closed reader is the person's choice, not a failure.
      if (r.stopped === 'SIGTERM') process.exitCode = 143;
      else if (r.stopped === 'SIGHUP') process.exitCode = 129;
      else if (!r.ok) process.exitCode = 1;
    });
}
