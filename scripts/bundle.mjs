// Bundles the CLI (see rolldown.config.mjs) through rolldown's API rather than
// its command line, which lists every chunk and source map it wrote (some 120
// lines) on each build, `npm install` included. Warnings are still printed
// (rolldown's default: console.warn) and an error fails the build with its message.
import { build } from 'rolldown';
import config from '../rolldown.config.mjs';

try {
  for (const c of config) await build(c);
} catch (err) {
  console.error(`the bundle failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
