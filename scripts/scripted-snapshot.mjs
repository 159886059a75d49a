// Builds the scripted agent's V8 startup snapshot: its bundle loaded once,
// with the ACP SDK's zod schemas made, and saved as the heap a node process
// starts from (`node --snapshot-blob <file>`: no script to compile, no
// module to run, only the agent's main()). Started and answering initialize,
// it takes 62 ms of CPU where the bundle took 96 (`node -e 0`: 27; medians
// of 31, interleaved): ~30 ms went to making the schemas, ~20 to compiling
// 330 KB. The scripted agent starts for every job of the demo and the tests,
// and its start is on every hand-over's way (bench/handover.bench.js).
//
// A snapshot loads only in the node binary that made it, so its name says
// which (src/agent/snapshot-name.ts, from the build tsc made just before;
// src/agent/resolve.ts builds the same name and uses the bundle,
// dist/agent/scripted/main.js, when there is no such file). Its name starts
// with main.js: what looks for the agent's processes by their command line
// finds them either way. It is written under another name, started once, and
// only then renamed: a blob cut short (a full disk, a build killed) makes
// node crash at its start, not refuse it.
import { spawnSync } from 'node:child_process';
import { readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedSnapshotName } from '../dist/src/agent/snapshot-name.js';

/** Builds dist/agent/scripted/main.js.snapshot-<node>-<platform>-<arch>-<build>.blob from snapshot.cjs; a failure is a warning (the bundle still runs). */
export function scriptedSnapshot(dir = 'dist/agent/scripted') {
  const script = join(dir, 'snapshot.cjs');
  const name = scriptedSnapshotName();
  const blob = join(dir, name);
  const partial = `${blob}.partial`;
  // Another node's (a build before the pinned node changed): no node here
  // loads it, and as dist/ is the package's, each went into it (8.4 MB each).
  for (const f of readdirSync(dir))
    if (f !== name && f.startsWith('main.js.snapshot-') && /\.blob(\.partial)?$/.test(f))
      rmSync(join(dir, f), { force: true });
  try {
    const env = { ...process.env, NODE_OPTIONS: '' };
    const r = spawnSync(process.execPath, ['--snapshot-blob', partial, '--build-snapshot', script], {
      encoding: 'utf8',
      env,
    });
    // Started from it with its stdin at end: the agent's main() sees its
    // connection closed and exits 0. A blob this node refuses or crashes on
    // is never named for it.
    const tried =
      r.status === 0
        ? spawnSync(process.execPath, ['--snapshot-blob', partial], {
            encoding: 'utf8',
            env,
            input: '',
            timeout: 60_000,
          })
        : r;
    if (tried.status === 0) renameSync(partial, blob);
    if (r.status !== 0 || tried.status !== 0) {
      rmSync(partial, { force: true });
      rmSync(blob, { force: true });
      console.warn(
        `the scripted agent's startup snapshot was not built (it starts from its bundle instead): ${(tried.stderr || tried.error?.message || (tried.signal ? `killed by ${tried.signal}` : `exit ${tried.status}`)).trim()}${tried === r ? '' : ' (when started from it)'}`,
      );
    } else if (r.stderr.trim()) {
      // Node's warnings, such as a built-in module it does not vouch for in a snapshot.
      console.warn(`the scripted agent's startup snapshot: ${r.stderr.trim()}`);
    }
  } finally {
    rmSync(script, { force: true });
  }
}
