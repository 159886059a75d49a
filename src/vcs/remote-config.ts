// A remote's configured URL, read from the repository's git config file
// rather than by spawning git: every command names its repository at
// start-up, and in a shared store the name comes from the remote. git answers
// whenever the file could mean more than it says (includes, a git dir given by
// the environment, a file that cannot be read).
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gitSync } from './git-run.js';

const GIT_ENV = ['GIT_DIR', 'GIT_COMMON_DIR', 'GIT_CONFIG', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT'];

/** The repository's common git dir (its main .git, also for a linked worktree), or null when unsure. */
function commonGitDir(root: string): string | null {
  const dotGit = join(root, '.git');
  try {
    let gitDir = dotGit;
    if (statSync(dotGit).isFile()) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
      if (!m) return null;
      gitDir = resolve(root, m[1]!);
    }
    try {
      return resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim());
    } catch {
      return gitDir; // the main worktree: no commondir file
    }
  } catch {
    return null;
  }
}

/** One value of git's config syntax: quotes removed, escapes applied, a trailing comment dropped. */
function configValue(raw: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && i + 1 < raw.length) {
      const n = raw[++i]!;
      out += n === 'n' ? '\n' : n === 't' ? '\t' : n;
    } else if ((c === '#' || c === ';') && !quoted) break;
    else out += c;
  }
  return out.trim();
}

/**
 * `remote.<name>.url` from the config text, 'ask-git' when the text has
 * includes (or a line this reader does not follow), null when absent.
 */
export function remoteUrlFromConfigText(text: string, name: string): string | 'ask-git' | null {
  let section = '';
  let url: string | null = null;
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t || t.startsWith('#') || t.startsWith(';')) continue;
    const head = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(t);
    if (head) {
      const kind = head[1]!.toLowerCase();
      // includes, and [remote.origin] (git's old form) this reader does not follow
      if (kind === 'include' || kind === 'includeif' || kind.includes('.')) return 'ask-git';
      section = head[2] !== undefined ? `${kind} ${head[2].replace(/\\(.)/g, '$1')}` : kind;
      if (head[3]) return 'ask-git'; // a key on the header's line
      continue;
    }
    if (t.startsWith('[')) return 'ask-git'; // a header this reader does not parse
    if (t.endsWith('\\')) return 'ask-git'; // a continued value
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(t);
    if (!kv) continue;
    // The last value wins, as `git config --get` gives.
    if (section === `remote ${name}` && kv[1]!.toLowerCase() === 'url') url = configValue(kv[2] ?? '');
  }
  return url;
}

/**
 * The URL `git config --get remote.<name>.url` gives in the repository at
 * `root`, or null when the remote is not set there (the user's global config
 * is not looked at: a remote lives in the repository's).
 */
export function remoteUrlSync(root: string, name: string): string | null {
  if (!GIT_ENV.some((k) => process.env[k])) {
    const common = commonGitDir(root);
    if (common) {
      let text: string | null;
      try {
        text = readFileSync(join(common, 'config'), 'utf8');
      } catch {
        text = null;
      }
      if (text !== null) {
        // A worktree's own config (extensions.worktreeConfig) can set a remote too: git answers then.
        const found = remoteUrlFromConfigText(text, name);
        if (found !== 'ask-git' && !/worktreeconfig\s*=\s*true/i.test(text)) return found || null;
      }
    }
  }
  const r = gitSync(root, ['config', '--get', `remote.${name}.url`], { keepGitEnv: true });
  return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : null;
}

/** Whether the repository at `root` has a remote named `name` (its URL set): model/remote.ts's HasRemote. */
export function hasRemoteSync(root: string): (name: string) => boolean {
  return (name) => remoteUrlSync(root, name) !== null;
}
