// The journal's public surface: the runner's finish hook, the CLI and the
// dashboard import from here.
export { journalJsonFile, journalMdFile, notesFile, stopFile } from './files.js';
export { appendNote } from './notes.js';
export { writeStopFile } from './stop-file.js';
export { writeJournal, type WriteJournalOptions, type WrittenJournal } from './write.js';
