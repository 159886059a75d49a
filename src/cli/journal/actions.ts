// The bodies of ii job journal | note (definitions in index.ts).
import { appendNote, notesFile, writeJournal } from '../../journal/index.js';
import { currentRepo, withStore } from '../context.js';
import { visibleText } from '../../text/sanitize.js';
import { printJson } from '../format.js';
import type { JournalOptions } from './options.js';

export async function jobJournal(id: string, o: JournalOptions): Promise<void> {
  const repo = currentRepo();
  const written = await withStore(async (s) => {
    const job = await s.jobs.resolve(repo.slug, id);
    return writeJournal(s, s.dir, job.id, { repoRoot: repo.root, force: Boolean(o.force) });
  });
  if (o.json) return printJson(written.journal);
  // The builder redacted it; what an agent or a test wrote may still hold control characters.
  process.stdout.write(visibleText(written.markdown));
}

export async function jobNote(id: string, words: string[]): Promise<void> {
  const { slug } = currentRepo();
  const { jobId, path } = await withStore(async (s) => {
    const job = await s.jobs.resolve(slug, id);
    appendNote(s.dir, job.id, words.join(' '));
    return { jobId: job.id, path: notesFile(s.dir, job.id) };
  });
  process.stdout.write(`Noted on job ${jobId} (${path}).\n`);
}
