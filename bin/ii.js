#!/usr/bin/env node
// Launcher for the `ii` command. incrementum needs Node >= 24 (node:sqlite);
// when started by an older Node it re-runs itself on the Node 24 that the
// repo's `node` devDependency installs, so `npx ii` works on a machine that
// ships an older Node.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const major = Number(process.versions.node.split('.')[0]);

if (major < 24) {
  const local = join(root, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(local)) {
    process.stderr.write(
      `ii: incrementum needs Node.js 24 or newer (this is ${process.version}).\n` +
        `Install Node 24, or run \`npm install\` in the incrementum checkout to get its pinned Node.\n`,
    );
    process.exit(2);
  }
  // Signals reach the child through the shared process group; we only relay its exit.
  const r = spawnSync(local, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  if (r.signal) process.kill(process.pid, r.signal);
  process.exit(r.status ?? 1);
}

// node:sqlite prints an ExperimentalWarning on every start; it says nothing to
// a user, so drop that one kind and keep every other warning.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (w.name === 'ExperimentalWarning') return;
  process.stderr.write(`${w.name}: ${w.message}\n`);
});

// Cache compiled bytecode between runs (Node's on-disk compile cache): loading
// the CLI's modules is most of a short command's time, and this halves it.
const { enableCompileCache } = await import('node:module');
enableCompileCache?.();

// dist/cli is the CLI bundled into a few files (npm run build: tsc, then
// rolldown); loading ~90 separate modules was a third of a short command's time.
const entry = join(root, 'dist', 'cli', 'main.js');
if (!existsSync(entry)) {
  process.stderr.write(`ii: ${entry} is missing: run \`npm install\` (or \`npm run build\`) in ${root}.\n`);
  process.exit(2);
}
const { main } = await import(entry);
await main(process.argv);
