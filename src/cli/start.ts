// The entry bin/ii.js loads. `ii job list` (and its --json, --all, --status)
// runs from here without commander and the registration of every command
// (main.ts), which were a fifth of its start: scripts and the board's
// neighbours call it often. Anything else, or any other word or option on
// the line (--help included), goes to main.ts, which parses it as before.
import { reportError } from './exit.js';
import type { ListOptions } from './job/options.js';
import { guardOutput } from './output.js';

export async function start(argv: string[]): Promise<void> {
  const list = jobListOptions(argv.slice(2));
  if (!list) return (await import('./main.js')).main(argv);
  guardOutput();
  try {
    await (await import('./job/list-show.js')).jobList(list);
  } catch (err) {
    process.exitCode = reportError(err);
  }
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
