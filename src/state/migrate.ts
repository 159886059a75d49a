// `ii state migrate`: the whole store copied between the local SQLite file and
// a shared PostgreSQL (pg/copy.ts: into an empty store, in one transaction,
// checked by counts, the source only read), with each repository renamed for
// where it goes. On SQLite a repository is named by its clone's path, on
// PostgreSQL by what its clones share (identity.ts); a repository is renamed
// when its clone is found on this machine (the current repository, and any
// whose workspaces are still here) and copied under its old name otherwise.
import { existsSync } from 'node:fs';
import { UserError } from '../errors.js';
import { worktreeMainRoot } from '../vcs/worktree-root.js';
import { sharedIdentity } from './identity.js';
import { repoSlug } from './paths.js';
import { openDatabase } from './sqlite/db.js';
import { moveWorkspaces, type MoveWorktree } from './workspace-moves.js';

export interface Renamed {
  from: string;
  to: string;
  /** The clone it was found by. */
  root: string;
  /** What the shared name comes from: the project name, the remote's URL, or the path. */
  by: 'project' | 'remote' | 'path';
  source: string;
}

export interface MigrateResult {
  /** Rows copied per table. */
  counts: Record<string, number>;
  renamed: Renamed[];
  /** Repositories copied under their old names (no clone of theirs found here). */
  kept: string[];
  /** Workspaces moved to their repository's new name: old path → new. */
  moved: Record<string, string>;
}

/** Where this machine's workspaces are, and how a worktree is moved (Vcs.moveWorkspace). */
export interface WorkspacePlace {
  stateDir: string;
  move: MoveWorktree;
}

/** Moves the renamed repositories' workspaces, runs `copy` with their new paths, and moves them back if it fails. */
async function withMovedWorkspaces(
  ws: WorkspacePlace,
  repos: RepoRows[],
  renamed: Renamed[],
  copy: (paths: Record<string, string>) => Promise<Record<string, number>>,
): Promise<{ counts: Record<string, number>; moved: Record<string, string> }> {
  const moves = await moveWorkspaces(
    ws.stateDir,
    renamed,
    new Map(repos.map((r) => [r.repo, r.paths])),
    ws.move,
  );
  try {
    return { counts: await copy(moves.paths), moved: moves.paths };
  } catch (err) {
    await moves.undo().catch(() => {});
    throw err;
  }
}

interface RepoRows {
  repo: string;
  paths: string[];
}

const REPOS_SQL = `SELECT repo, NULL AS path FROM todos UNION SELECT repo, NULL FROM jobs
  UNION SELECT repo, NULL FROM runners UNION SELECT repo, path FROM workspaces`;

function group(rows: { repo: string; path: string | null }[]): RepoRows[] {
  const by = new Map<string, string[]>();
  for (const r of rows) {
    const paths = by.get(r.repo) ?? [];
    if (r.path) paths.push(r.path);
    by.set(r.repo, paths);
  }
  return [...by].map(([repo, paths]) => ({ repo, paths })).sort((a, b) => a.repo.localeCompare(b.repo));
}

/**
 * The renames for the repositories in a store: `nameOf(root)` is a clone's
 * name where the copy goes, `oldNameOf(root)` where it comes from; a
 * repository's clone is `here` when its old name is here's, else the main
 * checkout of one of its workspaces still on this disk.
 */
function renames(
  repos: RepoRows[],
  here: string | null,
  oldNameOf: (root: string) => string,
  to: 'shared' | 'local',
): { renamed: Renamed[]; kept: string[] } {
  const renamed: Renamed[] = [];
  const kept: string[] = [];
  for (const { repo, paths } of repos) {
    const candidates = [here, ...paths.filter((p) => existsSync(p)).map(worktreeMainRoot)];
    const root = candidates.find((r): r is string => r !== null && oldNameOf(r) === repo);
    if (!root) {
      kept.push(repo);
      continue;
    }
    const id = sharedIdentity(root);
    const target = to === 'shared' ? id.slug : repoSlug(root);
    if (target === repo) continue;
    renamed.push({ from: repo, to: target, root, by: id.by, source: id.by === 'path' ? root : id.source });
  }
  const targets = new Map<string, string>();
  for (const r of renamed) {
    const other = targets.get(r.to);
    if (other)
      throw new UserError(
        `two repositories in the store, ${other} and ${r.from}, would both become ${r.to} (two clones of one ${r.by === 'project' ? 'project' : 'remote'} on this machine): the copy cannot merge them. Nothing was changed.\n` +
          'Give one of them its own [state] project name in its incrementum.toml, then run this again.',
      );
    targets.set(r.to, r.from);
  }
  return { renamed, kept };
}

const ACTIVE_SQL = "SELECT id FROM jobs WHERE status = 'active' ORDER BY id";

/** A copy is a snapshot: a job still running would go on writing to the source, and its later records be lost. */
function refuseActive(ids: string[], where: string): void {
  if (ids.length === 0) return;
  const shown = ids.slice(0, 5).join(', ') + (ids.length > 5 ? `, … (${ids.length})` : '');
  throw new UserError(
    `${where} has ${ids.length === 1 ? 'a job' : `${ids.length} jobs`} still active (${shown}): what ${ids.length === 1 ? 'it writes' : 'they write'} after the copy would be lost. Nothing was changed.\n` +
      'Stop ii run and let the jobs end (ii job list shows them; ii job abandon <job> stops one), then run this again.',
  );
}

const rekeyOf = (renamed: Renamed[]): Record<string, string> =>
  Object.fromEntries(renamed.map((r) => [r.from, r.to]));

/** Copies the SQLite store at `dbPath` into the empty PostgreSQL store at `url`, naming repositories by what their clones share. */
export async function migrateSqliteToPg(
  dbPath: string,
  url: string,
  here: string | null,
  ws: WorkspacePlace,
): Promise<MigrateResult> {
  if (!existsSync(dbPath)) throw new UserError(`there is no local state at ${dbPath}: nothing to copy.`);
  const lite = openDatabase(dbPath);
  let repos: RepoRows[];
  try {
    refuseActive(
      (lite.prepare(ACTIVE_SQL).all() as { id: string }[]).map((r) => r.id),
      `the local store ${dbPath}`,
    );
    repos = group(lite.prepare(REPOS_SQL).all() as { repo: string; path: string | null }[]);
  } finally {
    lite.close();
  }
  const { renamed, kept } = renames(repos, here, repoSlug, 'shared');
  const { copySqliteToPg } = await import('./pg/copy.js');
  const { counts, moved } = await withMovedWorkspaces(ws, repos, renamed, (paths) =>
    copySqliteToPg(dbPath, url, { rekey: rekeyOf(renamed), paths }),
  );
  return { counts, renamed, kept, moved };
}

/** Copies the PostgreSQL store at `url` into the empty SQLite store at `dbPath`, naming repositories by their clones' paths. */
export async function migratePgToSqlite(
  url: string,
  dbPath: string,
  here: string | null,
  ws: WorkspacePlace,
): Promise<MigrateResult> {
  const { PgDb } = await import('./pg/db.js');
  const db = new PgDb(url);
  let repos: RepoRows[];
  try {
    await db.migrate();
    refuseActive(
      (await db.q<{ id: string }>(ACTIVE_SQL)).map((r) => r.id),
      `PostgreSQL state database ${db.location}`,
    );
    repos = group(await db.q<{ repo: string; path: string | null }>(REPOS_SQL));
  } finally {
    await db.close();
  }
  const { renamed, kept } = renames(repos, here, (root) => sharedIdentity(root).slug, 'local');
  const { copyPgToSqlite } = await import('./pg/copy.js');
  const { counts, moved } = await withMovedWorkspaces(ws, repos, renamed, (paths) =>
    copyPgToSqlite(url, dbPath, { rekey: rekeyOf(renamed), paths }),
  );
  return { counts, renamed, kept, moved };
}
