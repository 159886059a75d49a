// Small real tmpfs mounts for tests of a full disk (mounting needs root, or
// CAP_SYS_ADMIN): a filesystem of a known size that a file of filler bytes
// fills to the last byte, so a write meets a real ENOSPC.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const mounted: string[] = [];

/** mount's complaint, on one line. */
const errText = (err: unknown): string =>
  (String((err as { stderr?: Buffer | string }).stderr ?? '').trim() || (err as Error).message)
    .split('\n')[0]!
    .trim();

/** Why a tmpfs cannot be mounted here (null when it can): tried once, on a scratch folder. */
export function tmpfsUnavailable(): string | null {
  const probe = mkdtempSync(join(tmpdir(), 'ii-tmpfs-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
  } catch (err) {
    rmSync(probe, { recursive: true, force: true });
    return `mounting a tmpfs is not permitted here (${errText(err)})`;
  }
  execFileSync('umount', [probe], { stdio: 'pipe' });
  rmSync(probe, { recursive: true, force: true });
  return null;
}

/** Mounts a tmpfs of `size` (mount's syntax: 8m) on `dir`, made if missing. */
export function mountTmpfs(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  mounted.push(dir);
}

/** Unmounts every tmpfs mountTmpfs made, newest first (lazily when a process still holds one). */
export function unmountAll(): void {
  for (const dir of mounted.splice(0).reverse()) {
    try {
      execFileSync('umount', [dir], { stdio: 'pipe' });
    } catch {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      } catch {} // not mounted any more
    }
  }
}

/** Bytes a non-root writer can still put on the filesystem holding `dir`. */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Fills the filesystem holding `file`'s folder with `file` until a write fails with ENOSPC. */
export function fill(file: string): void {
  const fd = openSync(file, 'a');
  const chunk = Buffer.alloc(64 * 1024, 0x5a);
  try {
    for (let size = chunk.length; size >= 1;) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        size = Math.floor(size / 2); // the last pages: smaller writes until none fits
      }
    }
  } finally {
    closeSync(fd);
  }
}
