// Dependency lockfiles: which package manager a project uses (`ii init` writes
// its install command as [workspace] setup), and a hash of the lockfiles a
// workspace holds, so setup runs again only when they changed.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { diskFiles, type ProjectFiles } from './project-files.js';

export interface PackageManager {
  /** The lockfile that named it, relative to the repo root. */
  lockfile: string;
  /** The install command for [workspace] setup. */
  setup: string;
  /** The folder it installs into, reusable from the user's checkout when the lockfile matches. */
  dependencyDir: string | null;
}

/**
 * In order of precedence: a repo with two lockfiles (a pnpm project with a
 * stale package-lock.json) gets the first. Frozen installs: a job must test
 * the dependencies the lockfile pins, never resolve new ones.
 */
const NODE: { lockfile: string; setup: (files: ProjectFiles) => string }[] = [
  { lockfile: 'pnpm-lock.yaml', setup: () => 'pnpm install --frozen-lockfile' },
  {
    lockfile: 'yarn.lock',
    setup: (files) => (isYarnBerry(files) ? 'yarn install --immutable' : 'yarn install --frozen-lockfile'),
  },
  { lockfile: 'bun.lock', setup: () => 'bun install --frozen-lockfile' },
  { lockfile: 'bun.lockb', setup: () => 'bun install --frozen-lockfile' },
  { lockfile: 'package-lock.json', setup: () => 'npm ci' },
];

const PYTHON: PackageManager[] = [
  { lockfile: 'uv.lock', setup: 'uv sync --locked', dependencyDir: null },
  { lockfile: 'poetry.lock', setup: 'poetry install', dependencyDir: null },
  {
    lockfile: 'requirements.txt',
    setup: 'python3 -m venv .venv && .venv/bin/pip install -r requirements.txt',
    dependencyDir: null,
  },
];

/**
 * A Node project without a lockfile (many libraries keep none: `.npmrc`
 * package-lock=false) still needs its dependencies installed, devDependencies
 * included, for its tests: `npm install`, told to write no lockfile, so a job's
 * workspace gets no new untracked package-lock.json for the agent to commit.
 * package.json stands in for the lockfile: the checkout's node_modules is
 * reused when package.json is byte-for-byte the same.
 */
const NO_LOCKFILE = { lockfile: 'package.json', setup: 'npm install --no-package-lock' } as const;

/** Whether the project's package.json names any dependency to install. */
function hasNodeDependencies(files: ProjectFiles): boolean {
  try {
    const pkg = JSON.parse(files.read('package.json') ?? '') as Record<string, unknown>;
    return ['dependencies', 'devDependencies', 'optionalDependencies'].some((k) => {
      const deps = pkg[k];
      return typeof deps === 'object' && deps !== null && Object.keys(deps).length > 0;
    });
  } catch {
    return false;
  }
}

/** Every lockfile name incrementum knows, for the hash. */
export const LOCKFILES = [
  ...NODE.map((n) => n.lockfile),
  ...PYTHON.map((p) => p.lockfile),
  'npm-shrinkwrap.json',
] as const;

/**
 * Yarn 2+ ("berry") refuses --frozen-lockfile's meaning and wants
 * --immutable; it is told apart by .yarnrc.yml or a packageManager field.
 */
function isYarnBerry(files: ProjectFiles): boolean {
  if (files.has('.yarnrc.yml')) return true;
  try {
    const pkg = JSON.parse(files.read('package.json') ?? '') as { packageManager?: unknown };
    return typeof pkg.packageManager === 'string' && /^yarn@(?!1\.)/.test(pkg.packageManager);
  } catch {
    return false;
  }
}

/**
 * The package managers a project uses, from its lockfiles: at most one for
 * Node and one for Python (the same precedence as the guessed test command).
 * Cargo and Go fetch what they need on the first build, so they need no setup
 * step. `from`: a checkout's root, or the files of a commit (what a
 * workspace will have, project-files.ts).
 */
export function detectPackageManagers(from: string | ProjectFiles): PackageManager[] {
  const files = typeof from === 'string' ? diskFiles(from) : from;
  const out: PackageManager[] = [];
  const node = NODE.find((n) => files.has(n.lockfile));
  if (node) out.push({ lockfile: node.lockfile, setup: node.setup(files), dependencyDir: 'node_modules' });
  else if (!files.has('npm-shrinkwrap.json') && hasNodeDependencies(files))
    out.push({ ...NO_LOCKFILE, dependencyDir: 'node_modules' });
  const py = PYTHON.find((p) => files.has(p.lockfile));
  if (py) out.push(py);
  return out;
}

/**
 * A hash of the setup commands and of every lockfile present in `dir`: equal
 * hashes mean a setup done for one holds for the other (an agent that adds a
 * dependency changes the lockfile, and so the hash).
 */
export function lockfileHash(dir: string, setup: readonly string[]): string {
  const h = createHash('sha256');
  h.update(JSON.stringify(setup));
  // Without a Node lockfile, package.json is what an install follows: an
  // agent that adds a dependency there makes setup run again.
  const noLockfile = !NODE.some((n) => existsSync(join(dir, n.lockfile)));
  for (const name of noLockfile ? [...LOCKFILES, 'package.json'] : LOCKFILES) {
    let body: Buffer;
    try {
      body = readFileSync(join(dir, name));
    } catch {
      continue;
    }
    h.update(`\0${name}\0${body.length}\0`);
    h.update(body);
  }
  return h.digest('hex').slice(0, 16);
}
