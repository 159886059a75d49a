// Which store of record this process uses: a PostgreSQL URL from
// II_DATABASE_URL (wins) or the user's config ([state] url in
// ~/.config/incrementum/config.toml), else none (the local SQLite file).
// Every command asks, so the config file is parsed only when a `url` key may
// be in it; a file that holds a password must be the user's alone.
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { dbUrlPassword, scrubUrlUserinfo } from '../text/db-url.js';
import { parseTomlLazily } from './lazy-toml.js';

/** `$XDG_CONFIG_HOME/incrementum/config.toml`, else `~/.config/incrementum/config.toml`. */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.length > 0
      ? env.XDG_CONFIG_HOME
      : join(env.HOME || homedir(), '.config');
  return join(xdg, 'incrementum', 'config.toml');
}

/** Where the URL came from, to name in messages (never the URL itself). */
export type StoreUrlSource = 'II_DATABASE_URL' | string;

export interface StoreUrl {
  url: string;
  /** 'II_DATABASE_URL', or the config file's path. */
  from: StoreUrlSource;
}

/**
 * The PostgreSQL URL configured for this process, or null for SQLite. A
 * config file holding a URL with a password that its group or others may
 * read is refused (UserError naming the chmod), whoever else could read it.
 */
export function configuredStoreUrl(env: NodeJS.ProcessEnv = process.env): StoreUrl | null {
  const given = env.II_DATABASE_URL?.trim();
  if (given) return { url: given, from: 'II_DATABASE_URL' };
  const file = userConfigFile(env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null; // no user config (one that cannot be read is loadConfig's to report)
  }
  // Most configs set no URL: no TOML parse on every command for them.
  if (!/\burl\b/.test(text)) return null;
  let state: unknown;
  try {
    state = (parseTomlLazily(text) as { state?: unknown }).state;
  } catch (err) {
    // A broken file with no url key (the word in a comment, say) is
    // loadConfig's to report, as before: the reading commands warn and go
    // on. One that may set the store is not guessed past: SQLite instead of
    // the shared store would be a second, diverging record.
    if (!/^\s*(url|"url"|'url')\s*=|^\s*state\.url\s*=/m.test(text)) return null;
    throw new UserError(`config ${file} is not valid TOML: ${scrubUrlUserinfo((err as Error).message)}`);
  }
  const url = (state as { url?: unknown } | undefined)?.url;
  if (typeof url !== 'string' || !url.trim()) return null;
  if (!/^postgres(ql)?:\/\//.test(url.trim()))
    throw new UserError(
      `config ${file}: [state] url must be a postgres:// or postgresql:// URL.\nFix it, or remove the key to use the local SQLite store.`,
    );
  if (dbUrlPassword(url)) {
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077)
      throw new UserError(
        `config ${file} holds a database password and can be read by ${mode & 0o007 ? 'anyone on this machine' : 'its group'} (mode ${mode.toString(8).padStart(3, '0')}).\n` +
          `Make it yours alone: chmod 600 ${file}, then run this again (or move the URL to II_DATABASE_URL).`,
      );
  }
  return { url: url.trim(), from: file };
}
