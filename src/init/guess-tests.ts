// Guesses a repository's test commands from the files that name them. Only
// obvious guesses: a wrong test command is worse than none, because every job
// would fail on it; with none, `ii job do` says to set one.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** npm's placeholder for "no tests yet": not a test command. */
const NPM_PLACEHOLDER = /no test specified/;

function read(root: string, name: string): string | null {
  try {
    return readFileSync(join(root, name), 'utf8');
  } catch {
    return null;
  }
}

function nodeTest(root: string): string | null {
  const text = read(root, 'package.json');
  if (text === null) return null;
  let pkg: { scripts?: Record<string, unknown> };
  try {
    pkg = JSON.parse(text) as typeof pkg;
  } catch {
    return null;
  }
  const test = pkg.scripts?.test;
  if (typeof test !== 'string' || NPM_PLACEHOLDER.test(test)) return null;
  if (existsSync(join(root, 'pnpm-lock.yaml'))) return 'pnpm test';
  if (existsSync(join(root, 'yarn.lock'))) return 'yarn test';
  if (existsSync(join(root, 'bun.lockb')) || existsSync(join(root, 'bun.lock'))) return 'bun test';
  return 'npm test';
}

function makeTest(root: string): string | null {
  const text = read(root, 'Makefile') ?? read(root, 'makefile') ?? read(root, 'GNUmakefile');
  if (text === null) return null;
  for (const target of ['test', 'check']) {
    if (new RegExp(`^${target}\\s*:`, 'm').test(text)) return `make ${target}`;
  }
  return null;
}

function pythonTest(root: string): string | null {
  const text = read(root, 'pyproject.toml');
  if (text === null) return null;
  return /pytest/.test(text) ? 'python -m pytest' : null;
}

/** Test commands for the repo at `root`, most specific first; [] when nothing is obvious. */
export function guessTestCommands(root: string): string[] {
  // A Makefile's test target usually wraps the language's runner: prefer it alone.
  const make = makeTest(root);
  if (make) return [make];
  const out: string[] = [];
  const node = nodeTest(root);
  if (node) out.push(node);
  if (existsSync(join(root, 'go.mod'))) out.push('go test ./...');
  if (existsSync(join(root, 'Cargo.toml'))) out.push('cargo test');
  const py = pythonTest(root);
  if (py) out.push(py);
  return out;
}
