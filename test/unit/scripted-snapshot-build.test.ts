// scripts/scripted-snapshot.mjs as the build runs it: the blob for this node
// is made, and one another node made (a build before the pinned node changed)
// goes, since no node here loads it and dist/ is what the package ships.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript with no declarations
import { scriptedSnapshot } from '../../scripts/scripted-snapshot.mjs';
import { tempDir } from '../helpers/tmp.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('the scripted agent snapshot build', () => {
  it('leaves only this node’s blob beside the bundle', () => {
    const t = tempDir('ii-snapbuild-');
    cleanups.push(t.cleanup);
    const mine = `main.js.snapshot-${process.version}-${process.platform}-${process.arch}.blob`;
    const old = `main.js.snapshot-v24.0.0-${process.platform}-${process.arch}.blob`;
    writeFileSync(join(t.path, old), 'an older node’s heap');
    writeFileSync(join(t.path, 'main.js'), '// the bundle stays\n');
    writeFileSync(
      join(t.path, 'snapshot.cjs'),
      "require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {});\n",
    );
    (scriptedSnapshot as (dir: string) => void)(t.path);
    expect(existsSync(join(t.path, mine))).toBe(true);
    expect(readdirSync(t.path).sort()).toEqual(['main.js', mine].sort());
  }, 60_000);
});
