// ii doctor's checks of the repository a job would run in: a checkout with
// a working tree and a commit to start from, a git identity for the commits
// jobs make, and prompt templates that parse and name only real variables.
import { UserError } from '../errors.js';
import { Prompts } from '../job/prompts.js';
import { gitSync } from '../vcs/git-run.js';
import type { CheckResult } from './checks.js';

/** Finding the user's repository honours their GIT_DIR (keepGitEnv), as the rest of ii does. */
function git(cwd: string, args: string[], keepGitEnv = false): { ok: boolean; out: string } {
  try {
    const r = gitSync(cwd, args, { keepGitEnv });
    return { ok: r.code === 0, out: r.code === 0 ? r.stdout.trim() : '' };
  } catch {
    return { ok: false, out: '' }; // no git: the git check says so
  }
}

/** The repository's root, or a finding saying why jobs cannot run here. */
export function checkRepo(cwd: string): { result: CheckResult; root: string | null } {
  const top = git(cwd, ['rev-parse', '--show-toplevel'], true);
  if (!top.ok || !top.out) {
    if (git(cwd, ['rev-parse', '--is-bare-repository'], true).out === 'true') {
      const dir = git(cwd, ['rev-parse', '--absolute-git-dir'], true).out || cwd;
      return {
        root: null,
        result: {
          name: 'repo',
          ok: false,
          detail: `${dir} is a bare repository: it has no working tree for jobs to branch from`,
          fix: `Run ii in a clone with a working tree: git clone ${dir} <folder>, then cd there.`,
        },
      };
    }
    return {
      root: null,
      result: {
        name: 'repo',
        ok: false,
        detail: `${cwd} is not inside a git repository`,
        fix: 'Run ii doctor in the checkout you want jobs in (or create one with git init and a first commit).',
      },
    };
  }
  const root = top.out;
  if (!git(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']).ok)
    return {
      root,
      result: {
        name: 'repo',
        ok: false,
        detail: `${root} has no commits yet, so a job has no base revision to start from`,
        fix: 'Make a first commit: git add -A && git commit -m initial',
      },
    };
  return { root, result: { name: 'repo', ok: true, detail: root } };
}

/**
 * The identity commits are made with. Without one, git refuses to commit
 * and the runner falls back to "incrementum <incrementum@localhost>", which
 * the user never chose: say so before a job makes commits in their name.
 */
export function checkIdentity(root: string): CheckResult {
  // useConfigOnly: git's guess from the hostname (root@host.(none)) is no identity either.
  const author = git(root, ['-c', 'user.useConfigOnly=true', 'var', 'GIT_AUTHOR_IDENT']);
  const committer = git(root, ['-c', 'user.useConfigOnly=true', 'var', 'GIT_COMMITTER_IDENT']);
  if (author.ok && committer.ok)
    return { name: 'identity', ok: true, detail: author.out.replace(/ \d+ [+-]\d{4}$/, '') };
  return {
    name: 'identity',
    ok: false,
    detail:
      'no git identity (user.name and user.email are not set): the commits jobs make would be authored "incrementum <incrementum@localhost>"',
    fix: 'git config --global user.name "Your Name"\ngit config --global user.email "you@example.com"\n(without --global: for this repository only)',
  };
}

/** Every template a job uses parses, and reads no variable that does not exist. */
export function checkTemplates(root: string): CheckResult {
  try {
    new Prompts(root).loadAll();
    return { name: 'templates', ok: true, detail: 'the prompt templates parse and use known variables' };
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    const lines = err.message.split('\n');
    const about = lines.filter((l) => l.startsWith('prompt template ') || l.startsWith('cannot read'));
    const rest = lines.filter((l) => !about.includes(l));
    return { name: 'templates', ok: false, detail: about.join('\n'), fix: rest.join('\n') };
  }
}
