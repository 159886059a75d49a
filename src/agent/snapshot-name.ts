// The name of the scripted agent's V8 startup snapshot, for the node binary
// that reads it. A snapshot loads only in the binary that made it: another
// Node version refuses it (exit 14, "Failed to load the startup snapshot
// because it was built with Node.js version ..."), and another build of the
// same version (a distribution's, another libc's, other configure flags) may
// take it and crash, as a damaged one does (SIGSEGV). So the name says which
// binary: its version, platform and architecture, and a hash of its build
// (every component's version and its configure options) and of the
// executable's size and modification time, which differ between two builds
// the rest cannot tell apart. Hashing the executable's ~120 MB would take a
// third of a second of every agent's start; this takes a stat and a few KB.
// scripts/scripted-snapshot.mjs names the blob it builds with this, from the
// build (dist/src/agent/snapshot-name.js), and src/agent/resolve.ts looks for it.
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';

/** main.js.snapshot-<version>-<platform>-<arch>-<12 hex of this binary's build>.blob */
export function scriptedSnapshotName(): string {
  let exe: string;
  try {
    const s = statSync(process.execPath);
    exe = `${s.size}:${s.mtimeMs}`;
  } catch {
    // Not there any more (replaced under a running node): the name still
    // differs from any build's, so no blob is taken for this binary.
    exe = 'unknown';
  }
  const build = createHash('sha256')
    .update(JSON.stringify([process.versions, process.config, exe]))
    .digest('hex')
    .slice(0, 12);
  return `main.js.snapshot-${process.version}-${process.platform}-${process.arch}-${build}.blob`;
}
