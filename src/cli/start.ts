// The entry bin/ii.js loads. `ii job list` (and its --json, --all, --status)
// runs from here without commander and the registration of every command
// (main.ts), which were a fifth of its start: scripts and the board's
// neighbours call it often. Anything else, or any other word or option on
// the line (--help included), goes to main.ts, which parses it as before.
//
// This file imports nothing at its top: it is bundled on its own
// (rolldown.config.mjs), with the job list's body (job/list-run.ts) as one
// chunk of its own holding everything that body loads, so every command but
// that one pays only for reading its arguments here.
import type { ListOptions } from './job/options.js';

export async function start(argv: string[]): Promise<void> {
  const list = jobListOptions(argv.slice(2));
  if (!list) return (await import('./main.js')).main(argv);
  return (await import('./job/list-run.js')).runJobList(list);
}

/** `job list` with only the options commander would give it as these, or null for commander to parse. */
export function jobListOptions(args: string[]): ListOptions | null {
  if (args[0] !== 'job' || args[1] !== 'list') return null;
  const o: ListOptions = {};
  for (let i = 2; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--json') o.json = true;
    else if (a === '--all') o.all = true;
    else if (a.startsWith('--status=')) o.status = a.slice('--status='.length);
    else if (a === '--status' && i + 1 < args.length && !args[i + 1]!.startsWith('-')) o.status = args[++i];
    else return null;
  }
  return o;
}
