// ii job journal | note: a job's run journal, and notes that go into it.
// Definitions only; the bodies are in actions.ts.
import type { Command } from 'commander';
import { jobCommand } from '../job/index.js';
import type { JournalOptions } from './options.js';

export function registerJournalCommands(program: Command): void {
  const job = jobCommand(program);
  const actions = () => import('./actions.js');

  job
    .command('journal')
    .description("write (or reuse) a job's journal.json and journal.md and print the journal")
    .argument('<job>', 'job id or any unique prefix')
    .option('--json', 'print journal.json instead of the markdown')
    .option('--force', 'rebuild even when the journal is up to date')
    .action(async (id: string, o: JournalOptions) => (await actions()).jobJournal(id, o));

  job
    .command('note')
    .description("add a note to a job (it appears in the job's journal)")
    .argument('<job>', 'job id or any unique prefix')
    .argument('<text...>', 'the note')
    .action(async (id: string, words: string[]) => (await actions()).jobNote(id, words));
}
