// `ii job list` as start.ts runs it, without commander: the output guarded
// and an error ended as main.ts ends one. Bundled as one chunk with all it
// loads (rolldown.config.mjs): the job list's start is what this is for.
import { reportError } from '../exit.js';
import { guardStderrWhenMade } from '../output.js';
import { jobList } from './list-show.js';
import type { ListOptions } from './options.js';

export async function runJobList(list: ListOptions): Promise<void> {
  // stdout is guarded where the listing writes it through process.stdout
  // (list-show.ts): made here, it would slow the JSON written to a pipe.
  // stderr is guarded when first made: most listings write nothing there.
  guardStderrWhenMade();
  try {
    await jobList(list);
  } catch (err) {
    process.exitCode = reportError(err);
  }
}
