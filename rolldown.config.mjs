// Bundles the CLI's own compiled modules (and commander) into dist/cli, the
// entry bin/ii.js loads: a short command such as `ii job list` spent a third
// of its time resolving and loading ~90 separate modules. Each command's body
// stays its own chunk, loaded when it runs. zod is bundled too: as a package
// it is ~110 files (every locale) loaded by any command that opens the store,
// half of `ii job list`'s module loading; our schemas never reach another
// package's zod. Other packages stay external, so there is one React and Ink.
const cli = {
  // start.js is what bin/ii.js loads: ii job list runs from it without
  // commander; main.js, the commander program, is loaded for anything else.
  input: { start: 'dist/src/cli/start.js', main: 'dist/src/cli/main.js' },
  platform: 'node',
  // Warnings and errors only (scripts/bundle.mjs runs it).
  logLevel: 'warn',
  external: (id) =>
    !id.startsWith('.') &&
    !id.startsWith('/') &&
    !id.startsWith('commander') &&
    !/^zod(\/|$)/.test(id) &&
    !/^[A-Za-z]:/.test(id),
  output: {
    dir: 'dist/cli',
    format: 'esm',
    sourcemap: true,
    // A command's body is named for its folder (cli/job/do.ts -> cli-job-do),
    // since every command group has an actions.ts and an index.ts.
    chunkFileNames: (chunk) => {
      const m = chunk.facadeModuleId?.match(/dist\/src\/(.+)\.js$/);
      return `${m ? m[1].replaceAll('/', '-') : '[name]'}-[hash].js`;
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

export default [cli, scriptedAgent];
