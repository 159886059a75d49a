// What a job's processes may see and touch, as data: built from the config,
// the agent and the workspace's git layout, before anything is spawned. Pure,
// so the same policy drives bubblewrap here (bwrap.ts) and a macOS profile
// (seatbelt.ts), and each rule is unit-tested without a sandbox.
//
// The shape: the whole filesystem read-only; a private /tmp; the workspace,
// the agent's own state and caches read-write; credentials and incrementum's
// own state hidden (an agent that could write state.db could forge its own
// review); of the repository's git dir only what a commit on the workspace's
// own branch writes is writable (objects, the worktree's admin dir, the
// branch's ref and reflog folders), never its config, hooks, the user's
// checkout, other branches or the workspace's `.git` pointer.
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import type { SandboxSection } from '../../model/config.js';
import type { DependencyOverlay } from './overlay.js';
import { workspaceOfBranch } from '../../model/workspace-branch.js';
import { isStoreCredentialEnv } from '../child-env.js';

/** rw: writable; ro: readable only; hidden: there but empty (a dir) or empty (a file); tmpfs: private and writable. */
export type Access = 'rw' | 'ro' | 'hidden' | 'tmpfs';

export interface Mount {
  path: string;
  access: Access;
  /** Why it is there, for `ii doctor` and the tests' messages. */
  why: string;
}

/** Where a worktree's git state lives (read from its `.git` file, see git-layout.ts). */
export interface GitLayout {
  /** The repository's git dir (`<repo>/.git`). */
  commonDir: string;
  /** The worktree's own git dir (`<common>/worktrees/<name>`); null when the workspace holds its own `.git` dir. */
  adminDir: string | null;
  /** The workspace's `.git` file. */
  dotGit: string;
  /**
   * The workspace's own branch (`refs/heads/incrementum/workspace-<n>/work`)
   * when it has it checked out, else null: nothing of refs/ is then writable.
   */
  branchRef: string | null;
}

export interface PolicyInput {
  workspace: string;
  /** The user's checkout. */
  repoRoot: string;
  /** incrementum's state dir (hidden; the workspace inside it stays writable). */
  stateDir: string;
  home: string;
  /** The environment the presets read (XDG dirs, the scripted agent's scenario). */
  env: NodeJS.ProcessEnv;
  /**
   * The agent's own environment ([agent] env over `env`): its HOME and XDG
   * dirs may be elsewhere, and its state dirs are where it will look.
   */
  agentEnv?: NodeJS.ProcessEnv;
  /** The agent's preset name (opencode, claude, gemini, scripted, ...). */
  agentName: string;
  /** The agent's argv: an absolute program, and its arguments up to the script, under a private dir stay readable. */
  agentCommand?: readonly string[];
  /** Folders incrementum's own helpers run from inside (node and the package, for an allow list's net-guest.js). */
  helpers?: readonly string[];
  git: GitLayout | null;
  config: SandboxSection;
  /** The dependency folders mounted as overlays ([workspace] reuse = "overlay", overlay.ts). */
  overlays?: readonly DependencyOverlay[];
}

export interface SandboxPolicy {
  /** Parents before children: applied in order, a later, deeper mount wins. */
  mounts: Mount[];
  /** Folders made before the start, so a writable mount has a source (agent state dirs, ref folders). */
  mkdirs: string[];
  /**
   * JSON files made (as `{}`) before the start when missing: a file the
   * agent keeps in the read-only home (Claude Code's ~/.claude.json) can be
   * written only if it is there to mount. (Claude Code's atomic rename onto
   * it fails; it falls back to writing it in place.)
   */
  mkfiles: string[];
  /** `{ allow }`: a network namespace of its own, reaching the world through net-host.ts's proxy. */
  network: SandboxSection['network'];
  /** Names passed through although they look like credentials. */
  passEnv: string[];
  cwd: string;
  /**
   * The checkout's dependency folders, read-only beneath an upper layer of
   * the workspace's own, mounted at folders inside the workspace.
   */
  overlays: DependencyOverlay[];
}

/** Hidden unless `[sandbox] readable` names them: where credentials live. */
export const HIDDEN_BY_DEFAULT = [
  '~/.ssh',
  '~/.aws',
  '~/.gnupg',
  '~/.config/gh',
  '~/.netrc',
  '~/.git-credentials',
  '~/.docker',
  '~/.kube',
  '~/.npmrc',
  '~/.pypirc',
  '~/.config/gcloud',
  '~/.azure',
  // PostgreSQL's password and service files and client certificates: the
  // shared store's credentials (the incrementum config dir, which may hold
  // its URL, is hidden in buildPolicy, wherever XDG_CONFIG_HOME puts it).
  '~/.pgpass',
  '~/.pg_service.conf',
  '~/.postgresql',
  // Sockets that run commands outside the sandbox: the container daemon and
  // the user's session bus (a read-only mount does not stop a connect()).
  '/var/run/docker.sock',
  '/run/docker.sock',
  '/run/user',
];

/** Package managers' caches: a setup's `npm ci` writes there. */
const CACHES = ['~/.npm', '~/.cache'];

const xdg = (env: NodeJS.ProcessEnv, name: string, fallback: string): string => {
  const v = env[name];
  return v && isAbsolute(v) ? v : fallback;
};

/** The agent's own state and cache dirs, by preset: it cannot start or remember a session without them. */
export function agentWritable(agentName: string, env: NodeJS.ProcessEnv, home: string): string[] {
  const data = xdg(env, 'XDG_DATA_HOME', join(home, '.local', 'share'));
  const config = xdg(env, 'XDG_CONFIG_HOME', join(home, '.config'));
  const state = xdg(env, 'XDG_STATE_HOME', join(home, '.local', 'state'));
  const cache = xdg(env, 'XDG_CACHE_HOME', join(home, '.cache'));
  switch (agentName) {
    case 'opencode':
      return ['opencode'].flatMap((n) => [join(data, n), join(config, n), join(state, n), join(cache, n)]);
    case 'claude':
      return [
        join(home, '.claude'),
        join(home, '.claude.json'),
        join(config, 'claude'),
        join(cache, 'claude'),
        join(data, 'claude'),
        join(state, 'claude'), // its version locks
      ];
    case 'gemini':
      return [join(home, '.gemini'), join(cache, 'gemini')];
    case 'codex':
      return [env.CODEX_HOME && isAbsolute(env.CODEX_HOME) ? env.CODEX_HOME : join(home, '.codex')];
    case 'scripted': {
      // It keeps its place in the scenario in a state file beside it
      // (written through a rename, so the folder must be writable).
      const given = env.II_SCRIPTED_STATE || env.II_SCRIPTED_SCENARIO;
      if (!given || !isAbsolute(given)) return [];
      return [env.II_SCRIPTED_STATE ? dirname(given) : scriptedStateDir(given)];
    }
    default:
      return [];
  }
}

/** A scenario file keeps its state beside it; a scenario folder keeps it inside. */
function scriptedStateDir(scenario: string): string {
  return scenario.endsWith('.json') ? dirname(scenario) : scenario;
}

/** Names that look like credentials: not passed into the sandbox unless named. */
const CREDENTIAL = [
  /_TOKEN$/i,
  /_SECRET$/i,
  /_KEY$/i,
  /_PASSWORD$/i,
  /_PASSWD$/i,
  /_CREDENTIALS?$/i,
  /^AWS_/i,
  /^GH_/i,
  /^GITHUB_TOKEN$/i,
  /^SSH_AUTH_SOCK$/i,
  /^GPG_AGENT_INFO$/i,
  /_API_KEY/i,
  /^NPM_CONFIG__AUTH/i,
];

/** The model keys each agent needs: passed although they look like credentials. */
export const AGENT_ENV: Record<string, string[]> = {
  claude: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_APPLICATION_CREDENTIALS'],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  opencode: [
    'ANTHROPIC_API_KEY',
    'OPENAI_API_KEY',
    'GEMINI_API_KEY',
    'GOOGLE_API_KEY',
    'OPENROUTER_API_KEY',
    'GROQ_API_KEY',
    'MISTRAL_API_KEY',
    'DEEPSEEK_API_KEY',
    'XAI_API_KEY',
    'OPENCODE_API_KEY',
  ],
};

export const looksLikeCredential = (name: string): boolean => CREDENTIAL.some((r) => r.test(name));

/**
 * `env` minus the names that look like credentials, except those in `pass`;
 * the store's URL and credentials (child-env.ts) go whatever `pass` names.
 */
export function sandboxEnv(env: NodeJS.ProcessEnv, pass: readonly string[]): Record<string, string> {
  const keep = new Set(pass);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env))
    if (v !== undefined && !isStoreCredentialEnv(k) && (keep.has(k) || !looksLikeCredential(k))) out[k] = v;
  return out;
}

/** `~/x` against home; anything not absolute after that is dropped (the schema asks for absolute or ~ paths). */
export function expandHome(p: string, home: string): string {
  const e = p === '~' ? home : p.startsWith('~/') ? join(home, p.slice(2)) : p;
  return normalize(e).replace(/(.)\/+$/, '$1');
}

const depth = (p: string) => (p === sep ? 0 : p.split(sep).length - 1);
/** True when `p` is `dir` or inside it. */
export const within = (dir: string, p: string) => p === dir || p.startsWith(dir === sep ? sep : dir + sep);

/**
 * Orders mounts parents first (a deeper one covers what its parent gave),
 * keeps the last word on each path, and drops a mount that changes nothing
 * (its nearest enclosing mount gives the same: read-only, or the root).
 */
export function settle(mounts: readonly Mount[]): Mount[] {
  const last = new Map<string, Mount>();
  for (const m of mounts) {
    last.delete(m.path);
    last.set(m.path, m);
  }
  const ordered = [...last.values()].sort((a, b) => depth(a.path) - depth(b.path));
  const out: Mount[] = [];
  for (const m of ordered) {
    const parent = [...out].reverse().find((o) => within(o.path, m.path));
    const parentAccess: Access = parent?.access ?? 'ro';
    if (m.access === 'ro' && parentAccess === 'ro') continue;
    if (m.access === 'hidden' && parentAccess === 'hidden') continue;
    if (m.access === 'rw' && parentAccess === 'rw') continue;
    out.push(m);
  }
  return out;
}

/** The job's sandbox, from its config, its agent and its workspace. */
export function buildPolicy(i: PolicyInput): SandboxPolicy {
  const home = i.home;
  const abs = (p: string) => expandHome(p, home);
  const agentEnv = { ...i.env, ...i.agentEnv };
  const agentHome =
    agentEnv.HOME && isAbsolute(agentEnv.HOME) ? normalize(agentEnv.HOME).replace(/(.)\/+$/, '$1') : home;
  // What is hidden under the user's home is hidden under the agent's too.
  const homes = agentHome === home ? [home] : [home, agentHome];
  const mounts: Mount[] = [];
  const add = (path: string, access: Access, why: string) => {
    if (isAbsolute(path)) mounts.push({ path: normalize(path), access, why });
  };

  add('/tmp', 'tmpfs', 'a private /tmp');
  // Private /tmp hides what lives there; what the job needs from it comes back read-only.
  const readable = new Set([...homes, i.repoRoot]);
  // The program, and its arguments up to its script: options before it may
  // name a file it loads too (the scripted agent's `--snapshot-blob <file>`).
  const [program, ...args] = i.agentCommand ?? [];
  for (const a of [program ?? '', ...args.slice(0, args.findIndex((x) => !x.startsWith('-')) + 1)])
    if (isAbsolute(a)) readable.add(dirname(a));
  for (const h of i.helpers ?? []) if (isAbsolute(h)) readable.add(h);
  for (const p of readable)
    if (within('/tmp', p) && p !== '/tmp') add(p, 'ro', 'needed from the private /tmp');

  const own = agentWritable(i.agentName, agentEnv, agentHome);
  const writable = [...CACHES.map(abs), ...own, ...i.config.writable.map(abs)];
  for (const p of writable) add(p, 'rw', `writable: the agent's state, caches, or [sandbox] writable`);
  const unhidden = new Set(i.config.readable.map(abs));
  const defaults = homes.flatMap((h) => HIDDEN_BY_DEFAULT.map((p) => expandHome(p, h)));
  // The user's incrementum config may hold the shared store's URL and
  // password ([state] url), and libpq's variables may name the files that do.
  const storeFiles = homes.map((h) => join(xdg(i.env, 'XDG_CONFIG_HOME', join(h, '.config')), 'incrementum'));
  for (const name of ['PGPASSFILE', 'PGSERVICEFILE']) {
    const f = i.env[name];
    if (f && isAbsolute(f)) storeFiles.push(normalize(f));
  }
  for (const p of [...defaults, ...storeFiles, ...i.config.hidden.map(abs)])
    if (!unhidden.has(p)) add(p, 'hidden', 'hidden: credentials, or [sandbox] hidden');
  add(i.stateDir, 'hidden', "hidden: incrementum's own state (the agent could forge its review)");
  // incrementum's compiled code (bin/ii.js keeps Node's compile cache there,
  // under the writable ~/.cache): an entry forged inside would run, outside
  // the sandbox, at the user's next ii.
  for (const h of homes)
    add(
      join(xdg(i.env, 'XDG_CACHE_HOME', join(h, '.cache')), 'incrementum'),
      'hidden',
      "hidden: incrementum's compile cache (code ii runs)",
    );
  const nodeCache = i.env.NODE_COMPILE_CACHE;
  if (nodeCache && isAbsolute(nodeCache))
    add(nodeCache, 'hidden', 'hidden: the compile cache NODE_COMPILE_CACHE names (code ii runs)');

  // The user's checkout stays read-only even under a writable folder.
  add(i.repoRoot, 'ro', "read-only: the user's checkout");
  const mkfiles = own.filter((p) => p.endsWith('.json'));
  const mkdirs = writable.filter((p) => !mkfiles.includes(p));
  if (i.git) {
    const g = i.git;
    add(g.commonDir, 'ro', "read-only: the repository's git dir (config, hooks, other branches)");
    add(join(g.commonDir, 'objects'), 'rw', 'writable: a commit writes its objects');
    add(join(g.commonDir, 'objects', 'pack'), 'ro', 'read-only: the packed history');
    add(join(g.commonDir, 'objects', 'info'), 'ro', 'read-only: alternates and the commit graph');
    if (g.adminDir) {
      add(g.adminDir, 'rw', "writable: the worktree's index, HEAD and logs");
      add(join(g.adminDir, 'commondir'), 'ro', "read-only: the worktree's link to the repository");
      add(join(g.adminDir, 'gitdir'), 'ro', "read-only: the worktree's link back to the workspace");
      add(join(g.adminDir, 'config.worktree'), 'ro', "read-only: the worktree's own config");
    }
    // A ref is written through `<ref>.lock` and a rename, so its folder must
    // be writable: the workspace's branch is alone in a folder of its own
    // (model/workspace-branch.ts), never refs/heads itself, which holds the
    // user's branches. Nothing is mounted over another workspace's branch, so
    // a landing deleting one while this sandbox is set up cannot fail it.
    if (
      g.branchRef?.startsWith('refs/heads/') &&
      workspaceOfBranch(g.branchRef.slice('refs/heads/'.length)) !== null
    ) {
      const refDir = dirname(join(g.commonDir, g.branchRef));
      const logDir = dirname(join(g.commonDir, 'logs', g.branchRef));
      add(refDir, 'rw', `writable: the folder of the workspace's branch (${g.branchRef})`);
      add(logDir, 'rw', `writable: the reflog folder of the workspace's branch`);
      mkdirs.push(refDir, logDir);
    }
  }
  add(i.workspace, 'rw', 'writable: the workspace');
  if (i.git && i.git.adminDir) add(i.git.dotGit, 'ro', "read-only: the workspace's .git pointer");

  return {
    mounts: settle(mounts),
    mkdirs,
    mkfiles,
    network: i.config.network,
    passEnv: [...(AGENT_ENV[i.agentName] ?? []), ...i.config['pass-env']],
    cwd: i.workspace,
    // Only inside the workspace: an overlay elsewhere would make writable what the policy keeps read-only.
    overlays: (i.overlays ?? []).filter((o) => o.path !== i.workspace && within(i.workspace, o.path)),
  };
}
