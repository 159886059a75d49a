// incrementum.toml: where it is looked for, how it is read, and errors that
// name the file and the key. Repo config wins over the user's, key by key.
// What it may hold is src/model/config.ts (the agent layer reads it too).
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { UserError } from '../errors.js';
import { Config } from '../model/config.js';
// A TOML table is checked as any parsed object is.
import { isObj as isTable, type Obj as Table } from '../model/obj.js';
import { scrubUrlUserinfo } from '../text/db-url.js';

/** The config files that apply to a repo, most specific first; only those that exist. */
export function configFiles(repoRoot: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const repoFile = [join(repoRoot, 'incrementum.toml'), join(repoRoot, '.incrementum', 'config.toml')].find(
    (p) => existsSync(p),
  );
  const xdg =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.length > 0
      ? env.XDG_CONFIG_HOME
      : join(env.HOME || homedir(), '.config');
  const userFile = join(xdg, 'incrementum', 'config.toml');
  return [repoFile, existsSync(userFile) ? userFile : undefined].filter((p): p is string => p !== undefined);
}

/** Section-wise merge: a key in `over` replaces the same key in `base`. */
function merge(base: Table, over: Table): Table {
  const out: Table = { ...base };
  for (const [k, v] of Object.entries(over))
    out[k] = isTable(v) && isTable(out[k]) ? { ...(out[k] as Table), ...v } : v;
  return out;
}

function readToml(path: string): Table {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read config ${path}: ${(err as Error).message}`);
  }
  try {
    return parseToml(text) as Table;
  } catch (err) {
    // The error quotes the line: the user's config may hold the store's URL and its password.
    throw new UserError(`config ${path} is not valid TOML: ${scrubUrlUserinfo((err as Error).message)}`);
  }
}

/** Loads and validates the config for a repo; defaults when there is no file. */
export function loadConfig(repoRoot: string, env: NodeJS.ProcessEnv = process.env): Config {
  const files = configFiles(repoRoot, env);
  // Validate each file on its own first, so an error names the file it is in.
  for (const f of files) {
    const raw = readToml(f);
    check(f, raw);
    if (f.startsWith(join(repoRoot, '/'))) refuseSharedUrl(f, raw);
    else refuseUserProject(f, raw);
  }
  const merged = files.reverse().reduce<Table>((acc, f) => merge(acc, readToml(f)), {});
  return Config.parse(merged);
}

function check(file: string, raw: Table): void {
  const r = Config.safeParse(raw);
  if (r.success) return;
  const lines = r.error.issues.map((i) => {
    const key = i.path.join('.');
    return `  ${key || '(top level)'}: ${i.message}`;
  });
  throw new UserError(
    `invalid config ${file}:\n${lines.join('\n')}\nFix the key(s) above; \`ii init\` writes a commented example.`,
  );
}

/**
 * A repository's config is committed and shared: a database URL (and its
 * password) belongs in the user's own config or II_DATABASE_URL.
 */
function refuseSharedUrl(file: string, raw: Table): void {
  const state = raw.state;
  if (isTable(state) && state.url !== undefined)
    throw new UserError(
      `config ${file} sets [state] url, but a repository's config is shared with everyone who clones it.\n` +
        'Move the URL to ~/.config/incrementum/config.toml (chmod 600) or II_DATABASE_URL, and remove it here.',
    );
}

/** [state] project names one repository for all its clones: in the user's config it would name every repository alike. */
function refuseUserProject(file: string, raw: Table): void {
  const state = raw.state;
  if (isTable(state) && state.project !== undefined)
    throw new UserError(
      `config ${file} sets [state] project, which names one repository in a shared store: set it in that repository's incrementum.toml instead, and remove it here.`,
    );
}
