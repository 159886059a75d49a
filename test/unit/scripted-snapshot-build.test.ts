// scripts/scripted-snapshot.mjs as the build runs it: the blob for this node
// is made, and one another node made (a build before the pinned node changed)
// goes, since no node here loads it and dist/ is what the package ships. A
// blob this node cannot start from is not kept under the name it looks for.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript with no declarations
import { scriptedSnapshot } from '../../scripts/scripted-snapshot.mjs';
import { scriptedSnapshotName } from '../../src/agent/snapshot-name.js';
import { tempDir } from '../helpers/tmp.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('the scripted agent snapshot build', () => {
  it('leaves only this node’s blob beside the bundle', () => {
    const t = tempDir('ii-snapbuild-');
    cleanups.push(t.cleanup);
    const mine = scriptedSnapshotName();
    const old = `main.js.snapshot-v24.0.0-${process.platform}-${process.arch}.blob`;
    writeFileSync(join(t.path, old), 'an older node’s heap');
    writeFileSync(join(t.path, `${mine}.partial`), 'a build cut short');
    writeFileSync(join(t.path, 'main.js'), '// the bundle stays\n');
    writeFileSync(
      join(t.path, 'snapshot.cjs'),
      "require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {});\n",
    );
    (scriptedSnapshot as (dir: string) => void)(t.path);
    expect(existsSync(join(t.path, mine))).toBe(true);
    expect(readdirSync(t.path).sort()).toEqual(['main.js', mine].sort());
  }, 60_000);

  it('keeps no blob this node fails to start from', () => {
    const t = tempDir('ii-snapbuild-');
    cleanups.push(t.cleanup);
    writeFileSync(join(t.path, 'main.js'), '// the bundle stays\n');
    // Builds, but every start from it fails, as one from a blob node refuses or crashes on.
    writeFileSync(
      join(t.path, 'snapshot.cjs'),
      "require('node:v8').startupSnapshot.setDeserializeMainFunction(() => process.exit(14));\n",
    );
    (scriptedSnapshot as (dir: string) => void)(t.path);
    expect(readdirSync(t.path)).toEqual(['main.js']);
  }, 60_000);

  it('names the blob for the node binary, not only its version', () => {
    const t = tempDir('ii-snapname-');
    cleanups.push(t.cleanup);
    // Another binary of the very same version (as another build would be): another name.
    const other = join(t.path, 'node');
    copyFileSync(process.execPath, other);
    const nameIn = (node: string) =>
      execFileSync(
        node,
        [
          '--input-type=module',
          '-e',
          `import('${join(process.cwd(), 'dist/src/agent/snapshot-name.js')}').then((m) => process.stdout.write(m.scriptedSnapshotName()))`,
        ],
        { encoding: 'utf8' },
      );
    const mine = nameIn(process.execPath);
    expect(mine).toBe(scriptedSnapshotName());
    expect(mine).toMatch(
      new RegExp(
        `^main\\.js\\.snapshot-${process.version}-${process.platform}-${process.arch}-[0-9a-f]{12}\\.blob$`,
      ),
    );
    expect(nameIn(other)).not.toBe(mine);
  }, 60_000);
});
