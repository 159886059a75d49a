// The few git facts a journal needs, each gathered on its own so one failing
// command costs one section, never the journal. Git runs through argv arrays
// (no shell, src/vcs's clean environment), read-only, with a timeout.
//
// These are facts of the whole run, base..head (its commits, its files, its
// diff stat), not of one iteration: the journal shows no iteration's diff, so
// it has no use for iterationDiff (src/history), which `ii job diff` and the
// dashboard share. What it counts per iteration (iterations, test runs)
// comes from the job record and the event log.
import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { gitRaw } from '../vcs/git-run.js';
import type { LogEntry } from '../vcs/vcs.js';

export type Fact<T> = { ok: true; value: T } | { ok: false; error: string };

export interface NumStat {
  path: string;
  /** null for a binary file. */
  insertions: number | null;
  deletions: number | null;
}

export interface GitFacts {
  /** base..head, oldest first. */
  log: Fact<LogEntry[]>;
  numstat: Fact<NumStat[]>;
  diffStat: Fact<string>;
}

/** File lines `git diff --stat` shows before "..." and the summary. */
export const DIFF_STAT_FILES = 20;

const TIMEOUT_MS = 15_000;

/** Runs git in `cwd`; resolves to stdout or to why it failed (never rejects). */
export async function git(cwd: string, args: string[]): Promise<Fact<string>> {
  let why: string;
  try {
    const r = await gitRaw(cwd, args, { timeoutMs: TIMEOUT_MS, env: { GIT_OPTIONAL_LOCKS: '0' } });
    if (r.code === 0) return { ok: true, value: r.stdout };
    why = r.stderr.trim().split('\n').at(-1) || `exit code ${r.code}`;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    why =
      e.code !== 'ENOENT'
        ? e.message
        : existsSync(cwd)
          ? 'git is not installed or not on PATH'
          : 'the folder does not exist';
  }
  return { ok: false, error: `git ${args[0]} failed in ${cwd}: ${why}` };
}

const map = <A, B>(f: Fact<A>, fn: (a: A) => B): Fact<B> => (f.ok ? { ok: true, value: fn(f.value) } : f);

/** `git log --format=%H|%ct|%s base..head`, oldest first. */
export function parseLog(out: string): LogEntry[] {
  const entries: LogEntry[] = [];
  for (const line of out.split('\n')) {
    if (!line) continue;
    const [sha = '', time = '', ...rest] = line.split('|');
    entries.push({ sha, time: Number(time), subject: rest.join('|') });
  }
  return entries;
}

export function parseNumstat(out: string): NumStat[] {
  const files: NumStat[] = [];
  for (const line of out.split('\n')) {
    if (!line) continue;
    const [ins = '', del = '', ...p] = line.split('\t');
    const num = (s: string) => (s === '-' ? null : Number(s));
    files.push({ path: p.join('\t'), insertions: num(ins), deletions: num(del) });
  }
  return files;
}

/** The facts for base..head, gathered in `cwd` (the repository or one of its worktrees). */
export async function gatherGitFacts(cwd: string, base: string, head: string): Promise<GitFacts> {
  const range = `${base}..${head}`;
  const [log, numstat, diffStat] = await Promise.all([
    git(cwd, ['log', '--reverse', '--format=%H|%ct|%s', range]),
    git(cwd, ['diff', '--no-renames', '--numstat', base, head, '--']),
    git(cwd, [
      'diff',
      '--no-renames',
      '--no-color',
      `--stat=100`,
      `--stat-count=${DIFF_STAT_FILES}`,
      base,
      head,
      '--',
    ]),
  ]);
  return {
    log: map(log, parseLog),
    numstat: map(numstat, parseNumstat),
    diffStat: map(diffStat, (s) => s.replace(/\s+$/, '')),
  };
}

/** The main repository's root for a worktree (or the repository itself), or null. */
export async function repoRootOf(dir: string): Promise<string | null> {
  const r = await git(dir, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  if (!r.ok) return null;
  const common = r.value.trim();
  return basename(common) === '.git' ? dirname(common) : null;
}
