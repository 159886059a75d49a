// A commit object's fields as `describe` needs them to write its rewrite
// with `git commit-tree` (what `git commit --amend --only` did): the same
// tree, parents and author; and git's `--cleanup=whitespace` of a message.
import { decodeBytes } from '../text/bytes.js';

export interface CommitFields {
  tree: string;
  parents: string[];
  /** GIT_AUTHOR_NAME, _EMAIL and _DATE giving the commit's own author; empty when its author line is not git's. */
  authorEnv: NodeJS.ProcessEnv;
  message: string;
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
  for (const h of headers) {
    if (h.startsWith('tree ')) tree = h.slice(5);
    else if (h.startsWith('parent ')) parents.push(h.slice(7));
    else if (h.startsWith('author ')) {
      const m = /^author (.*) <([^<>\n]*)> (\d+) ([+-]\d{4})$/.exec(h);
      if (m)
        authorEnv = { GIT_AUTHOR_NAME: m[1]!, GIT_AUTHOR_EMAIL: m[2]!, GIT_AUTHOR_DATE: `@${m[3]} ${m[4]}` };
    }
  }
  return { tree, parents, authorEnv, message };
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
