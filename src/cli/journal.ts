// ii job journal | note: a job's run journal, and notes that go into it.
import type { Command } from 'commander';
import { appendNote, notesFile, writeJournal } from '../journal/index.js';
import { currentRepo, withStore } from './context.js';
import { printJson } from './format.js';
import { jobCommand } from './job.js';

export function registerJournalCommands(program: Command): void {
  const job = jobCommand(program);

  job
    .command('journal')
    .description("write (or reuse) a job's journal.json and journal.md and print the journal")
    .argument('<job>', 'job id or any unique prefix')
    .option('--json', 'print journal.json instead of the markdown')
    .option('--force', 'rebuild even when the journal is up to date')
    .action(async (id: string, o: { json?: boolean; force?: boolean }) => {
      const repo = currentRepo();
      const written = await withStore(async (s) => {
        const job = s.jobs.resolve(repo.slug, id);
        return writeJournal(s, s.dir, job.id, { repoRoot: repo.root, force: Boolean(o.force) });
      });
      if (o.json) return printJson(written.journal);
      process.stdout.write(written.markdown);
    });

  job
    .command('note')
    .description("add a note to a job (it appears in the job's journal)")
    .argument('<job>', 'job id or any unique prefix')
    .argument('<text...>', 'the note')
    .action(async (id: string, words: string[]) => {
      const { slug } = currentRepo();
      const { jobId, path } = await withStore((s) => {
        const job = s.jobs.resolve(slug, id);
        appendNote(s.dir, job.id, words.join(' '));
        return { jobId: job.id, path: notesFile(s.dir, job.id) };
      });
      process.stdout.write(`Noted on job ${jobId} (${path}).\n`);
    });
}
