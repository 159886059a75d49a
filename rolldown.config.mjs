import { isBuiltin } from 'node:module';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(fileURLToPath(import.meta.url));

// Bundles the CLI's own compiled modules (and commander) into dist/cli, the
// entry bin/ii.js loads: a short command such as `ii job list` spent a third
// of its time resolving and loading ~90 separate modules. Each command's body
// stays its own chunk, loaded when it runs. zod is bundled too: as a package
// it is ~110 files (every locale) loaded by any command that opens the store,
// half of `ii job list`'s module loading; our schemas never reach another
// package's zod. Ink is bundled too, with what it imports (the dashboard's
// chunk alone loads it): as a package it is ~550 files, 415 of them
// es-toolkit's compat build for its one `throttle`; bundled, the dashboard's
// RSS after loading its modules is ~6 MB lower (bench/dashboard.bench.js).
// React stays external (one React), and so do its reconciler and scheduler:
// each picks its production or development build by NODE_ENV when loaded, as
// React does (a production reconciler under a development React draws
// nothing). execa (with its ~25 packages), the ACP SDK and smol-toml are
// bundled too: every job runner loads them, and as packages they were 270 of
// the 363 modules a standby runner (ii run's, src/cli/job/do.ts) loaded, the
// SDK with its own copy of zod; bundled, its load took 187 ms of CPU, not
// 306 (medians of 10), and that load competes with each hand-over's next
// job for the cores (bench/handover.bench.js). Other packages stay external.
const BUNDLED = /^(commander|zod|ink|string-width|execa|@agentclientprotocol\/sdk|smol-toml)(\/|$)/;

// Yoga (Ink's layout engine, bundled with Ink) carries its WebAssembly as a
// base64 data: URL and, wherever a global fetch exists (Node 18+), reads it
// with fetch(): that loads Node's whole HTTP client (undici) into the
// dashboard, ~10 MB of its RSS, to decode a string. Here it is decoded with
// Buffer in one step (without fetch, Emscripten's loader would decode it
// through a binary string a character at a time); the instance is the same. Each rewrite must match once: a Yoga whose loader changed fails
// the build rather than quietly bringing fetch back.
const YOGA_LOADER = /[\\/]yoga-layout[\\/]dist[\\/]binaries[\\/]yoga-wasm-base64-esm\.js$/;
const YOGA_REWRITES = [
  // No fetch: the binary comes from wa() (below), synchronously.
  ['function ya(){return w||"function"!=typeof fetch?', 'function ya(){return true?'],
  // wa() decodes the data: URL ("data:application/octet-stream;base64,", 37 characters) with Buffer.
  [
    'function wa(){var a=H;try{',
    'function wa(){var a=H;try{if(ua(a))return new Uint8Array(Buffer.from(a.slice(37),"base64"));',
  ],
];
const yogaWithoutFetch = {
  name: 'yoga-without-fetch',
  transform(code, id) {
    if (!YOGA_LOADER.test(id)) return null;
    for (const [from, to] of YOGA_REWRITES) {
      if (code.split(from).length !== 2)
        throw new Error(`yoga-layout's loader changed: "${from}" not found once in ${id}`);
      code = code.replace(from, to);
    }
    // Same lines as before (each rewrite is within one line): the map holds.
    return { code, map: null };
  },
};

const cli = {
  plugins: [yogaWithoutFetch],
  // main.js, the commander program, is what start.js (the build below)
  // loads for anything but ii job list.
  input: {
    main: 'dist/src/cli/main.js',
    // The dashboard's entry under a name of its own (its exports keep their
    // names): bench/dashboard-rss.child.js builds the board from it, as
    // `ii dashboard` runs it.
    dashboard: 'dist/src/cli/dashboard/run.js',
  },
  platform: 'node',
  // Warnings and errors only (scripts/bundle.mjs runs it).
  logLevel: 'warn',
  external: (id, importer) => {
    if (id.startsWith('.') || id.startsWith('/') || /^[A-Za-z]:/.test(id) || BUNDLED.test(id)) return false;
    // React's own; Node's; Ink's devtools (only under DEV=true, when installed).
    if (/^(react|react-reconciler|scheduler)(\/|$)/.test(id) || isBuiltin(id) || id === 'react-devtools-core')
      return true;
    // What a bundled package imports is bundled with it: an importer in a
    // node_modules below this folder, or outside it (a symlinked
    // node_modules resolves there), not one of ours in a checkout that is
    // itself inside a node_modules (an install's).
    return !(importer && /(^|[\\/])node_modules[\\/]/.test(relative(ROOT, importer)));
  },
  output: {
    dir: 'dist/cli',
    format: 'esm',
    sourcemap: true,
    // ASCII only: Node decodes a module's file into a one-byte string when
    // it is ASCII and into UTF-16 otherwise, the whole file for any one
    // character past it (a "→" in a doc comment). For ii job list's 158 KB
    // chunk that was 2-4 ms of its start. Non-ASCII in strings and regular
    // expressions is escaped; doc comments are left out (the source maps
    // lead to them), which also made that chunk 122 KB.
    charset: 'ascii',
    comments: { legal: true, annotation: true, jsdoc: false },
    // A command's body is named for its folder (cli/job/do.ts -> cli-job-do),
    // since every command group has an actions.ts and an index.ts; a
    // package's chunk for the package (ink).
    chunkFileNames: (chunk) => {
      const m = chunk.facadeModuleId?.match(/dist\/src\/(.+)\.js$/);
      const pkg = (chunk.facadeModuleId ?? chunk.moduleIds.at(-1))?.match(
        /node_modules\/((?:@[^/]+\/)?[^/]+)\//,
      );
      return `${m ? m[1].replaceAll('/', '-') : pkg ? pkg[1].replace('/', '-') : '[name]'}-[hash].js`;
    },
  },
};

// start.js, what bin/ii.js loads, is a build of its own: with one entry,
// rolldown puts everything the job list's body (cli/job/list-run.ts) loads
// statically into that body's one chunk, where the build above would share
// it with every command in ~30 chunks, each a module for the ES loader to
// resolve, read and link (ii job list loaded 35 files; now 3, with bin/ii.js).
// Its only way out is main.js, the build above's entry, which start.js
// loads for every other command: that import is left as it is written. What
// the body loads only on a rarer path (the PostgreSQL driver, the dead
// runners' cleanup) is a chunk of this build, named list-*, a copy of the
// other build's code that is never loaded beside it.
const start = {
  ...cli,
  input: { start: 'dist/src/cli/start.js', 'job-list': 'dist/src/cli/job/list-run.js' },
  external: (id, importer) => id === './main.js' || cli.external(id, importer),
  preserveEntrySignatures: 'allow-extension',
  output: {
    ...cli.output,
    paths: (id) => (id.endsWith('/dist/src/cli/main.js') || id === './main.js' ? './main.js' : id),
    chunkFileNames: (chunk) => `list-${cli.output.chunkFileNames(chunk)}`,
    // The body with everything it imports (a group takes its modules'
    // dependencies too) and rolldown's runtime helpers, which rolldown would
    // otherwise split out into chunks it shares with the rarer paths' chunks.
    codeSplitting: {
      groups: [
        {
          name: 'cli-job-list-run',
          test: (id) => /[\\/]dist[\\/]src[\\/]cli[\\/]job[\\/]list-run\.js$|rolldown[\\/]runtime/.test(id),
        },
      ],
    },
  },
};

// The scripted agent (a separate process, started for every prompt of `ii
// demo` and of the tests) as one file with its packages in it: it spent most
// of its start loading the ACP SDK and zod from ~100 files, and its start is
// part of every job's hand-over (bench/handover.bench.js).
const scriptedAgent = {
  input: 'dist/src/agent/scripted/main.js',
  platform: 'node',
  logLevel: 'warn',
  output: { file: 'dist/agent/scripted/main.js', format: 'esm' },
};

// The same agent as a CommonJS script, which is what node --build-snapshot
// takes: scripts/scripted-snapshot.mjs builds its startup snapshot from it
// (and removes it).
const scriptedAgentSnapshot = {
  ...scriptedAgent,
  output: { file: 'dist/agent/scripted/snapshot.cjs', format: 'cjs' },
};

export default [cli, start, scriptedAgent, scriptedAgentSnapshot];
