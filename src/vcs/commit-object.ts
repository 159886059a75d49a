// A commit object's fields as `describe` needs them to write its rewrite
// with `git commit-tree` (what `git commit --amend --only` did): the same
// tree, parents and author; and git's `--cleanup=whitespace` of a message.
import { decodeBytes } from '../text/bytes.js';

export interface CommitFields {
  tree: string;
  parents: string[];
  /** GIT_AUTHOR_NAME, _EMAIL and _DATE giving the commit's own author; empty when its author line is not git's. */
  authorEnv: NodeJS.ProcessEnv;
  /** The author and committer lines as written (`Name <email> <seconds> <zone>`). */
  author: string | null;
  committer: string | null;
  /** Only tree, parents, author and committer: nothing commit-tree added from config (a signature, an encoding). */
  plain: boolean;
  message: string;
}

/** A commit line's `Name <email>`, its time left out; null when it is not git's form. */
export function identOf(line: string | null): string | null {
  // A name that is not UTF-8 (kept as lone surrogates, bytes.ts) would not be written back as it was.
  if (/\p{Surrogate}/u.test(line ?? '')) return null;
  return /^(.*>) \d+ [+-]\d{4}$/.exec(line ?? '')?.[1] ?? null;
}

/** Now as a commit line's time: `<seconds> <zone>` (this machine's zone, as commit-tree writes it). */
export function commitTime(date = new Date()): string {
  const off = -date.getTimezoneOffset();
  const abs = Math.abs(off);
  const zone = `${off < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
  return `${Math.floor(date.getTime() / 1000)} ${zone}`;
}

/** The fields of a commit object's text (cat-file's contents of a commit). */
export function parseCommit(body: Buffer): CommitFields {
  const text = decodeBytes(body);
  const split = text.indexOf('\n\n');
  const headers = (split < 0 ? text : text.slice(0, split)).split('\n');
  const message = split < 0 ? '' : text.slice(split + 2);
  let tree = '';
  const parents: string[] = [];
  let authorEnv: NodeJS.ProcessEnv = {};
  let author: string | null = null;
  let committer: string | null = null;
  let plain = true;
  for (const h of headers) {
    if (h.startsWith('tree ')) tree = h.slice(5);
    else if (h.startsWith('parent ')) parents.push(h.slice(7));
    else if (h.startsWith('committer ')) committer = h.slice(10);
    else if (!h.startsWith('author ')) plain = false;
    else {
      author = h.slice(7);
      const m = /^author (.*) <([^<>\n]*)> (\d+) ([+-]\d{4})$/.exec(h);
      if (m)
        authorEnv = { GIT_AUTHOR_NAME: m[1]!, GIT_AUTHOR_EMAIL: m[2]!, GIT_AUTHOR_DATE: `@${m[3]} ${m[4]}` };
    }
  }
  return { tree, parents, authorEnv, author, committer, plain, message };
}

/**
 * git's `--cleanup=whitespace` (strbuf_stripspace with no comments): trailing
 * white space off each line, runs of blank lines made one, none at either
 * end, a final newline.
 */
export function stripSpace(text: string): string {
  const out: string[] = [];
  let blank = false;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[ \t\v\f\r]+$/, '');
    if (line === '') {
      blank = out.length > 0;
      continue;
    }
    if (blank) out.push('');
    blank = false;
    out.push(line);
  }
  return out.length ? `${out.join('\n')}\n` : '';
}
