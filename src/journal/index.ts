// The journal's public surface: the runner's finish hook, the CLI and the
// dashboard import from here.
export { buildJournal } from './build.js';
export { journalJsonFile, journalMdFile, notesFile, stopFile } from './files.js';
export { gatherInputs } from './gather.js';
export { appendNote } from './notes.js';
export { redact } from '../text/redact.js';
export { renderJournalMd } from './render-md.js';
export { Journal, JOURNAL_SCHEMA_VERSION } from './schema.js';
export { StopFile, writeStopFile } from './stop-file.js';
export { writeJournal, type WriteJournalOptions, type WrittenJournal } from './write.js';
