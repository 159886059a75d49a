// Auto-commit: after an implement turn that changed files, the same agent
// session is asked to commit exactly those files with a conventional message.
// The runner records every iteration itself (Vcs.commitIteration replaces the
// agent's commit with one on the change), so what matters here is whether the
// agent did it: its message becomes the iteration's draft message; if it did
// not, the iteration is still committed and the job gets a warning. Nothing
// here ever fails the iteration.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AfterImplement } from './types.js';
import type { FileChange, Todo } from '../model/index.js';
import { PROTOCOL_FILES, type Vcs } from '../vcs/vcs.js';
import { AUTO_COMMIT_MARK } from './scripted/scenario.js';

/** Longest summary sent: an agent's closing message can run long, and its end says what it did. */
export const SUMMARY_MAX = 2000;

/** The agent's own account of the iteration, trimmed to its last SUMMARY_MAX characters. */
export function iterationSummary(text: string | undefined): string {
  const t = (text ?? '').trim();
  if (t.length <= SUMMARY_MAX) return t;
  return '…' + t.slice(-SUMMARY_MAX).replace(/^\S*\s/, '');
}

const fileLine = (f: FileChange) =>
  `- ${f.path} (${f.is_deleted ? 'deleted' : f.is_new ? 'new file' : `+${f.additions}/-${f.deletions}`})`;

/** The prompt sent to the agent; it starts with AUTO_COMMIT_MARK (the scripted agent keys on it). */
export function autoCommitPrompt(o: {
  todo: Pick<Todo, 'id' | 'title' | 'description'>;
  files: FileChange[];
  summary?: string;
}): string {
  const files = o.files.length
    ? o.files.map(fileLine).join('\n')
    : '- (no file edits were reported; `git status` shows what changed)';
  // The file-tracking spec's commit prompt: the files, then the context (the task and a summary).
  const summary = iterationSummary(o.summary);
  const parts = [
    `${AUTO_COMMIT_MARK}: the files you changed for this todo, and nothing else.`,
    '',
    `# Todo ${o.todo.id}: ${o.todo.title}`,
    ...(o.todo.description.trim() ? ['', o.todo.description.trim()] : []),
    '',
    '# Files changed in this iteration',
    '',
    files,
    '',
    '# Summary of this iteration',
    '',
    summary || '(you gave no summary: `git diff` shows what changed)',
    '',
    '# What to do',
    '',
    '1. Stage exactly the files listed above (`git add -- <path>...`; `git rm` for a deleted one).',
    `   Do not stage anything else, and never ${PROTOCOL_FILES.join(' or ')}.`,
    '2. Commit them with a Conventional Commits message (`feat: ...`, `fix: ...`,',
    '   `refactor: ...`, `test: ...`, `docs: ...`, `chore: ...`): a subject of at most',
    '   72 characters in the imperative, then a blank line and a short body saying why.',
    '3. Do not push, do not amend or rewrite earlier commits, do not change any file.',
  ];
  return parts.join('\n') + '\n';
}

/** The AfterImplement for `[job] auto-commit = true`. */
export function autoCommit(vcs: Vcs): AfterImplement {
  return async ({ session, workspace, todo, files, summary }) => {
    try {
      const before = await vcs.head(workspace);
      const result = await session.prompt(autoCommitPrompt({ todo, files, ...(summary ? { summary } : {}) }));
      const after = await vcs.head(workspace);
      if (after === before)
        return {
          warning: `auto-commit: the agent did not commit (its turn ended: ${result.stopReason}); incrementum committed the iteration itself`,
        };
      const committed = new Set((await vcs.changedFiles(workspace, before, after)).map((f) => f.path));
      const left = files.filter((f) => !committed.has(f.path)).map((f) => f.path);
      const log = await vcs.log(workspace, before, after);
      const subject = log.at(-1)?.subject?.trim();
      // The agent's message becomes the iteration's draft, unless it wrote one.
      const draftFile = join(workspace, PROTOCOL_FILES[1]);
      if (subject && !existsSync(draftFile)) writeFileSync(draftFile, subject + '\n');
      if (left.length)
        return {
          warning: `auto-commit: the agent's commit left out ${left.join(', ')}; incrementum committed the whole iteration itself`,
        };
      return;
    } catch (err) {
      return {
        warning: `auto-commit failed (${(err as Error).message}); incrementum committed the iteration itself`,
      };
    }
  };
}
