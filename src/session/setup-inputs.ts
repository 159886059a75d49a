// What a [workspace] setup command cannot run without, as far as it is
// known: a frozen install's lockfile, pip's requirements file. ii doctor
// checks a fresh checkout of the base has each, so a setup that would fail in
// every workspace (`npm ci` where .gitignore keeps package-lock.json out of
// the commits) is a finding before any job, not a failure in each.

export interface SetupInput {
  /** The part of the command that needs it, e.g. `npm ci`. */
  step: string;
  /** Any one of these files, relative to the workspace root. */
  anyOf: string[];
  /** A command that does the same without it, when there is one. */
  instead: string | null;
}

interface Rule {
  /** Matches the words of one step (after any VAR=value prefix). */
  test: (words: string[]) => boolean;
  anyOf: (words: string[]) => string[];
  instead: string | null;
}

const NPM_CI = ['ci', 'clean-install', 'ic', 'install-clean', 'isntall-clean'];
const INSTALL = (w: string[]) =>
  w.length === 1 || w[1] === 'install' || w[1] === 'i' || w[1]!.startsWith('-');
const base = (w: string) => w.split('/').at(-1)!;

const RULES: Rule[] = [
  {
    test: (w) => base(w[0]!) === 'npm' && NPM_CI.includes(w[1] ?? ''),
    anyOf: () => ['package-lock.json', 'npm-shrinkwrap.json'],
    instead: 'npm install --no-package-lock',
  },
  {
    test: (w) =>
      base(w[0]!) === 'yarn' && INSTALL(w) && w.some((x) => x === '--frozen-lockfile' || x === '--immutable'),
    anyOf: () => ['yarn.lock'],
    instead: 'yarn install',
  },
  {
    test: (w) => base(w[0]!) === 'pnpm' && INSTALL(w) && w.includes('--frozen-lockfile'),
    anyOf: () => ['pnpm-lock.yaml'],
    instead: 'pnpm install --no-frozen-lockfile',
  },
  {
    test: (w) => base(w[0]!) === 'bun' && INSTALL(w) && w.includes('--frozen-lockfile'),
    anyOf: () => ['bun.lock', 'bun.lockb'],
    instead: 'bun install',
  },
  {
    test: (w) =>
      base(w[0]!) === 'uv' && w[1] === 'sync' && w.some((x) => x === '--locked' || x === '--frozen'),
    anyOf: () => ['uv.lock'],
    instead: 'uv sync',
  },
  {
    // pip install -r FILE, however pip is reached (.venv/bin/pip, python -m pip).
    test: (w) => w.some((x) => /^pip3?$/.test(base(x))) && requirement(w) !== null,
    anyOf: (w) => [requirement(w)!],
    instead: null,
  },
];

function requirement(words: string[]): string | null {
  const i = words.findIndex((x) => x === '-r' || x === '--requirement');
  if (i !== -1) return words[i + 1] ?? null;
  const joined = words.find((x) => x.startsWith('--requirement='));
  return joined ? joined.slice('--requirement='.length) : null;
}

/**
 * The inputs the steps of `command` need, read from its plain words: steps
 * joined by `&&` or `;`, up to the first that changes directory (the files
 * after it are not at the root). A word with quotes or `$` is not guessed at.
 */
export function setupInputs(command: string): SetupInput[] {
  const out: SetupInput[] = [];
  for (const raw of command.split(/&&|;|\n/)) {
    const step = raw.trim();
    const words = step.split(/\s+/).filter((w) => w !== '');
    while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=\S*$/.test(words[0]!)) words.shift();
    if (words.length === 0) continue;
    if (words[0] === 'cd' || words[0] === 'pushd') break;
    if (words.some((w) => /["'`$\\|<>(){}]/.test(w))) continue;
    const rule = RULES.find((r) => r.test(words));
    if (rule) out.push({ step, anyOf: rule.anyOf(words), instead: rule.instead });
  }
  return out;
}
