// Bundles the CLI (see rolldown.config.mjs) through rolldown's API rather than
// its command line, which lists every chunk and source map it wrote (some 120
// lines) on each build, `npm install` included. Warnings are still printed
// (rolldown's default: console.warn) and an error fails the build with its message.
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import config from '../rolldown.config.mjs';
import { builtinsWithoutFacades } from './builtins.mjs';
import { patchInk } from './ink-frame-caches.mjs';
import { patchKeyFrames } from './ink-key-frames.mjs';
import { requireReact } from './react-require.mjs';
import { scriptedSnapshot } from './scripted-snapshot.mjs';

try {
  // Ink's frame caches (scripts/ink-frame-caches.mjs), in the Ink bundled
  // here: done by prepare too, but a build after an install that ran no
  // scripts (npm ci --ignore-scripts) or one that brought Ink back
  // unrewritten bundled Ink as it ships, with nothing said. Done once only.
  patchInk(fileURLToPath(new URL('../node_modules/ink', import.meta.url)));
  // A keypress's frame drawn at once (scripts/ink-key-frames.mjs), likewise.
  patchKeyFrames(fileURLToPath(new URL('../node_modules/ink', import.meta.url)));
  for (const c of config) await build(c);
  // The CLI's: its start is what users wait for (scripts/builtins.mjs).
  builtinsWithoutFacades(config[0].output.dir);
  // The dashboard's (scripts/react-require.mjs).
  requireReact(config[0].output.dir);
  // The scripted agent's (scripts/scripted-snapshot.mjs).
  scriptedSnapshot();
} catch (err) {
  console.error(`the bundle failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
