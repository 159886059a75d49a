// How much disk a directory takes, as du counts it: allocated blocks, no
// file with other hard links (dependency clones are hard links of the checkout's
// node_modules, which freeing the workspace does not free), symlinks not
// followed. For `ii workspace prune` to say what it freed.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Bytes `path` takes on disk that removing it frees; 0 when it is gone. Never throws. */
export function diskUsage(path: string): number {
  let total = 0;
  const walk = (p: string) => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    // A file with other links elsewhere stays on disk when this name goes.
    if (!st.isDirectory() && st.nlink > 1) return;
    total += st.blocks * 512;
    if (!st.isDirectory()) return;
    let names: string[];
    try {
      names = readdirSync(p);
    } catch {
      return;
    }
    for (const name of names) walk(join(p, name));
  };
  walk(path);
  return total;
}
