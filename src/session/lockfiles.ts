// Dependency lockfiles: which package manager a project uses (`ii init` writes
// its install command as [workspace] setup), and a hash of the lockfiles a
// workspace holds, so setup runs again only when they changed.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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
const NODE: { lockfile: string; setup: (root: string) => string }[] = [
  { lockfile: 'pnpm-lock.yaml', setup: () => 'pnpm install --frozen-lockfile' },
  {
    lockfile: 'yarn.lock',
    setup: (root) => (isYarnBerry(root) ? 'yarn install --immutable' : 'yarn install --frozen-lockfile'),
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
function isYarnBerry(root: string): boolean {
  if (existsSync(join(root, '.yarnrc.yml'))) return true;
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { packageManager?: unknown };
    return typeof pkg.packageManager === 'string' && /^yarn@(?!1\.)/.test(pkg.packageManager);
  } catch {
    return false;
  }
}

/**
 * The package managers the repo at `root` uses, from its lockfiles: at most
 * one for Node and one for Python (the same precedence as the guessed test command). Cargo and Go fetch what they need on the
 * first build, so they need no setup step.
 */
export function detectPackageManagers(root: string): PackageManager[] {
  const out: PackageManager[] = [];
  const node = NODE.find((n) => existsSync(join(root, n.lockfile)));
  if (node) out.push({ lockfile: node.lockfile, setup: node.setup(root), dependencyDir: 'node_modules' });
  const py = PYTHON.find((p) => existsSync(join(root, p.lockfile)));
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
  for (const name of LOCKFILES) {
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
