// Guesses a repository's test commands from the files that name them. Only
// obvious guesses: a wrong test command is worse than none, because every job
// would fail on it; with none, `ii job do` says to set one.
import { diskFiles, type ProjectFiles } from '../session/project-files.js';

/** A guessed test command and what named it. */
export interface TestGuess {
  command: string;
  /** "package.json has a test script, and pnpm-lock.yaml" */
  reason: string;
}

/** npm's placeholder for "no tests yet": not a test command. */
const NPM_PLACEHOLDER = /no test specified/;

function nodeTest(files: ProjectFiles): TestGuess | null {
  const text = files.read('package.json');
  if (text === null) return null;
  let pkg: { scripts?: Record<string, unknown> };
  try {
    pkg = JSON.parse(text) as typeof pkg;
  } catch {
    return null;
  }
  const test = pkg.scripts?.test;
  if (typeof test !== 'string' || NPM_PLACEHOLDER.test(test)) return null;
  const reason = 'package.json has a test script';
  for (const [lockfile, command] of [
    ['pnpm-lock.yaml', 'pnpm test'],
    ['yarn.lock', 'yarn test'],
    ['bun.lockb', 'bun test'],
    ['bun.lock', 'bun test'],
  ] as const)
    if (files.has(lockfile))
      return { command, reason: `${reason}, and ${lockfile} names the package manager` };
  return { command: 'npm test', reason };
}

function makeTest(files: ProjectFiles): TestGuess | null {
  const name = ['Makefile', 'makefile', 'GNUmakefile'].find((n) => files.read(n) !== null);
  const text = name ? files.read(name) : null;
  if (!name || text === null) return null;
  for (const target of ['test', 'check']) {
    if (new RegExp(`^${target}\\s*:`, 'm').test(text))
      return { command: `make ${target}`, reason: `${name} has a ${target} target` };
  }
  return null;
}

function pythonTest(files: ProjectFiles): TestGuess | null {
  const text = files.read('pyproject.toml');
  if (text === null) return null;
  return /pytest/.test(text) ? { command: 'python -m pytest', reason: 'pyproject.toml names pytest' } : null;
}

/**
 * Test commands for a project, most specific first, each with what named it;
 * [] when nothing is obvious. `from`: a checkout's root, or the files of a
 * commit (project-files.ts).
 */
export function guessTests(from: string | ProjectFiles): TestGuess[] {
  const files = typeof from === 'string' ? diskFiles(from) : from;
  // A Makefile's test target usually wraps the language's runner: prefer it alone.
  const make = makeTest(files);
  if (make) return [make];
  const out: TestGuess[] = [];
  const node = nodeTest(files);
  if (node) out.push(node);
  if (files.has('go.mod')) out.push({ command: 'go test ./...', reason: 'go.mod makes it a Go module' });
  if (files.has('Cargo.toml'))
    out.push({ command: 'cargo test', reason: 'Cargo.toml makes it a Rust crate' });
  const py = pythonTest(files);
  if (py) out.push(py);
  return out;
}

/** The commands of guessTests. */
export function guessTestCommands(from: string | ProjectFiles): string[] {
  return guessTests(from).map((t) => t.command);
}
