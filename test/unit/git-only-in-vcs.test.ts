// Every git process goes through src/vcs, the one place that clears inherited
// GIT_DIR-style variables: a git spawned anywhere else could act on the
// user's checkout when ii runs from a hook. This reads the source tree.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

// A child-process call whose command is the literal 'git' (or "git").
const GIT_SPAWN = /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync|execa)\s*\(\s*['"`]git\b/;

it('spawns git only in src/vcs (the scripted agent, a stand-in for a real agent, aside)', () => {
  const offenders = [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'components'))]
    .map((f) => relative(ROOT, f).split('\\').join('/'))
    .filter((f) => !f.startsWith('src/vcs/') && !f.startsWith('src/agent/scripted/'))
    .filter((f) => GIT_SPAWN.test(readFileSync(join(ROOT, f), 'utf8')));
  expect(offenders).toEqual([]);
});
