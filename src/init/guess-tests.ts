// Guesses a repository's test commands from the files that name them. Only
// obvious guesses: a wrong test command is worse than none, because every job
// would fail on it; with none, `ii job do` says to set one.
import { diskFiles, type ProjectFiles } from '../session/project-files.js';

/** npm's placeholder for "no tests yet": not a test command. */
const NPM_PLACEHOLDER = /no test specified/;

function nodeTest(files: ProjectFiles): string | null {
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
  if (files.has('pnpm-lock.yaml')) return 'pnpm test';
  if (files.has('yarn.lock')) return 'yarn test';
  if (files.has('bun.lockb') || files.has('bun.lock')) return 'bun test';
  return 'npm test';
}

function makeTest(files: ProjectFiles): string | null {
  const text = files.read('Makefile') ?? files.read('makefile') ?? files.read('GNUmakefile');
  if (text === null) return null;
  for (const target of ['test', 'check']) {
    if (new RegExp(`^${target}\\s*:`, 'm').test(text)) return `make ${target}`;
  }
  return null;
}

function pythonTest(files: ProjectFiles): string | null {
  const text = files.read('pyproject.toml');
  if (text === null) return null;
  return /pytest/.test(text) ? 'python -m pytest' : null;
}

/**
 * Test commands for a project, most specific first; [] when nothing is
 * obvious. `from`: a checkout's root, or the files of a commit (project-files.ts).
 */
export function guessTestCommands(from: string | ProjectFiles): string[] {
  const files = typeof from === 'string' ? diskFiles(from) : from;
  // A Makefile's test target usually wraps the language's runner: prefer it alone.
  const make = makeTest(files);
  if (make) return [make];
  const out: string[] = [];
  const node = nodeTest(files);
  if (node) out.push(node);
  if (files.has('go.mod')) out.push('go test ./...');
  if (files.has('Cargo.toml')) out.push('cargo test');
  const py = pythonTest(files);
  if (py) out.push(py);
  return out;
}
