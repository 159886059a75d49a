// The body of ii state migrate (definition in index.ts).
import { UserError } from '../../errors.js';
import type { MigrateResult } from '../../state/migrate.js';
import { dbFile, stateDir } from '../../state/paths.js';
import { configuredStoreUrl } from '../../state/store-url.js';
import { redactDbUrl } from '../../text/db-url.js';
import { printJson } from '../format.js';
import type { StateMigrateOptions } from './options.js';

const isPgUrl = (u: string): boolean => /^postgres(ql)?:\/\//i.test(u);

/** The repository the command runs in, if any (its clone is renamed even without a workspace). */
async function here(): Promise<string | null> {
  const { currentRepo } = await import('../context.js');
  try {
    return currentRepo().root;
  } catch (err) {
    // Not in a repository: only the clones found by their workspaces are renamed.
    if (err instanceof UserError && /^not inside a git repository/.test(err.message)) return null;
    throw err;
  }
}

function configured(what: string): string {
  const c = configuredStoreUrl();
  if (!c)
    throw new UserError(
      `${what} names the configured PostgreSQL store, but none is: set II_DATABASE_URL or [state] url in ~/.config/incrementum/config.toml, or give the URL.`,
    );
  return c.url;
}

export async function stateMigrate(o: StateMigrateOptions): Promise<void> {
  // A config file that gives its password away is refused before anything else.
  configuredStoreUrl();
  const to = o.to.trim();
  const dbPath = dbFile(stateDir());
  const { migratePgToSqlite, migrateSqliteToPg } = await import('../../state/migrate.js');
  const { GitVcs } = await import('../../vcs/git.js');
  const vcs = new GitVcs();
  // A renamed repository's workspaces move to its new name, where every command looks for them.
  const ws = {
    stateDir: stateDir(),
    move: (root: string, a: string, b: string) => vcs.moveWorkspace(root, a, b),
  };
  let result: MigrateResult;
  let from: string;
  let into: string;
  if (to.toLowerCase() === 'sqlite') {
    const url = o.from ? o.from.trim() : configured('--to sqlite copies from');
    if (!isPgUrl(url)) throw new UserError(`--from must be a postgres:// URL, not "${redactDbUrl(url)}".`);
    [from, into] = [redactDbUrl(url), dbPath];
    result = await migratePgToSqlite(url, dbPath, await here(), ws);
  } else {
    if (o.from)
      throw new UserError('--from goes with --to sqlite; --to postgres copies the local SQLite store.');
    const url = to.toLowerCase() === 'postgres' ? configured('--to postgres') : to;
    if (!isPgUrl(url))
      throw new UserError(
        `--to must be postgres://…, postgres (the configured URL) or sqlite, not "${redactDbUrl(url)}".`,
      );
    [from, into] = [dbPath, redactDbUrl(url)];
    result = await migrateSqliteToPg(dbPath, url, await here(), ws);
  }
  if (o.json) {
    printJson({
      from,
      to: into,
      counts: result.counts,
      renamed: result.renamed,
      kept: result.kept,
      moved: result.moved,
    });
    return;
  }
  const out: string[] = [`Copied ${from} into ${into}, checked by counting every table:`];
  const counts = Object.entries(result.counts).filter(([t]) => t !== 'meta');
  const width = Math.max(...counts.map(([t]) => t.length));
  for (const [t, n] of counts) out.push(`  ${t.padEnd(width)}  ${n}`);
  if (result.renamed.length > 0) {
    out.push('Repositories renamed for where they went:');
    for (const r of result.renamed)
      out.push(
        `  ${r.from} → ${r.to} (${r.root}; ${r.by === 'remote' ? `remote ${r.source}` : r.by === 'project' ? `[state] project ${r.source}` : 'its path: no remote'})`,
      );
  }
  const moved = Object.entries(result.moved);
  if (moved.length > 0) {
    out.push(`Workspaces moved to their repository's new name (${moved.length}):`);
    for (const [a, b] of moved) out.push(`  ${a} → ${b}`);
  }
  if (result.kept.length > 0)
    out.push(
      `Kept under their old names (no clone of theirs found on this machine; their clones ${to.toLowerCase() === 'sqlite' ? 'on SQLite' : 'on PostgreSQL'} will not see them unless named so): ${result.kept.join(', ')}`,
    );
  out.push(
    `The source was not changed. ${to.toLowerCase() === 'sqlite' ? 'Unset II_DATABASE_URL (and [state] url) to use the local store.' : 'Set II_DATABASE_URL (or [state] url) on each machine to use the shared store.'}`,
  );
  process.stdout.write(out.join('\n') + '\n');
}
