// Opens the user's editor on a text and returns what they saved.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../errors.js';

/** $VISUAL, else $EDITOR, else vi; split on spaces ("code -w") and run without a shell. */
export function editorArgv(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = (env.VISUAL || env.EDITOR || 'vi').trim();
  return raw.split(/\s+/).filter(Boolean);
}

export function editText(
  initial: string,
  fileName = 'todo.md',
  env: NodeJS.ProcessEnv = process.env,
): string {
  const dir = mkdtempSync(join(tmpdir(), 'ii-edit-'));
  const file = join(dir, fileName);
  try {
    writeFileSync(file, initial, { mode: 0o600 });
    const [cmd, ...args] = editorArgv(env);
    const r = spawnSync(cmd!, [...args, file], { stdio: 'inherit', env });
    if (r.error)
      throw new UserError(
        `cannot start the editor "${cmd}": ${r.error.message}. Set $EDITOR, or pass --title.`,
      );
    if (r.status !== 0)
      throw new UserError(`the editor exited with ${r.status ?? r.signal}: nothing was created.`);
    return readFileSync(file, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
