// --description-file: a todo's description from a file, or from stdin with
// `-`, for what is too long or too shell-unfriendly for an argument (a
// pasted spec, a log). Read whole, as bytes first, so a file that is not
// text is refused with what to do rather than stored as replacement characters.
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { UserError } from '../../errors.js';

/** The description the options give: --description, or the file's text, never both. */
export async function descriptionOf(o: {
  desc?: string;
  descriptionFile?: string;
}): Promise<string | undefined> {
  if (o.descriptionFile === undefined) return o.desc;
  if (o.desc !== undefined)
    throw new UserError('give the description with --description or --description-file, not both.');
  const from = o.descriptionFile;
  const bytes = from === '-' ? await readStdin() : readFile(from);
  const where = from === '-' ? 'stdin' : from;
  if (!isUtf8(bytes))
    throw new UserError(
      `--description-file ${from}: ${where} is not UTF-8 text; convert it (iconv -t UTF-8) or give a text file.`,
    );
  return bytes.toString('utf8');
}

function readFile(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === 'ENOENT'
        ? 'no such file'
        : e.code === 'EISDIR'
          ? 'it is a directory'
          : e.code === 'EACCES'
            ? 'permission denied'
            : e.message;
    throw new UserError(
      `cannot read --description-file ${path}: ${why}. Give a readable file, or - for stdin.`,
    );
  }
}

async function readStdin(): Promise<Buffer> {
  // A person at a terminal is told how to end it, or they would wait on a silent prompt.
  if (process.stdin.isTTY) process.stderr.write('reading the description from stdin; end it with Ctrl-D\n');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks);
}
