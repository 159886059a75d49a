// The installed package's root (where package.json, bin/ and templates/ are),
// found from this module whether it runs from src/ (tests) or dist/src/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

export function packageRoot(): string {
  if (cached) return cached;
  let dir = import.meta.dirname;
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bin', 'ii.js'))) return (cached = dir);
    dir = dirname(dir);
  }
  throw new Error(`cannot find incrementum's package root above ${import.meta.dirname}`);
}

/** The `ii` launcher, for starting the CLI as a child process. */
export const iiBin = (): string => join(packageRoot(), 'bin', 'ii.js');
