// Builds the scripted agent's V8 startup snapshot: its bundle loaded once,
// with the ACP SDK's zod schemas made, and saved as the heap a node process
// starts from (`node --snapshot-blob <file>`: no script to compile, no
// module to run, only the agent's main()). Started and answering initialize,
// it takes 62 ms of CPU where the bundle took 96 (`node -e 0`: 27; medians
// of 31, interleaved): ~30 ms went to making the schemas, ~20 to compiling
// 330 KB. The scripted agent starts for every job of the demo and the tests,
// and its start is on every hand-over's way (bench/handover.bench.js).
//
// A snapshot loads only in the node that made it (same version, platform and
// architecture), so its name says which (src/agent/resolve.ts builds the same
// name and uses the bundle, dist/agent/scripted/main.js, when there is no
// such file). Its name starts with main.js: what looks for the agent's
// processes by their command line finds them either way.
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Builds dist/agent/scripted/main.js.snapshot-<node>-<platform>-<arch>.blob from snapshot.cjs; a failure is a warning (the bundle still runs). */
export function scriptedSnapshot(dir = 'dist/agent/scripted') {
  const script = join(dir, 'snapshot.cjs');
  const name = `main.js.snapshot-${process.version}-${process.platform}-${process.arch}.blob`;
  const blob = join(dir, name);
  // Another node's (a build before the pinned node changed): no node here
  // loads it, and as dist/ is the package's, each went into it (8.4 MB each).
  for (const f of readdirSync(dir))
    if (f !== name && f.startsWith('main.js.snapshot-') && f.endsWith('.blob'))
      rmSync(join(dir, f), { force: true });
  try {
    const r = spawnSync(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', script], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    if (r.status !== 0) {
      rmSync(blob, { force: true });
      console.warn(
        `the scripted agent's startup snapshot was not built (it starts from its bundle instead): ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`,
      );
    } else if (r.stderr.trim()) {
      // Node's warnings, such as a built-in module it does not vouch for in a snapshot.
      console.warn(`the scripted agent's startup snapshot: ${r.stderr.trim()}`);
    }
  } finally {
    rmSync(script, { force: true });
  }
}
