#!/usr/bin/env node
// Launcher for the `ii` command. incrementum needs Node >= 24 (node:sqlite);
// when started by an older Node it re-runs itself on the Node 24 that the
// repo's `node` devDependency installs, so `npx ii` works on a machine that
// ships an older Node.
//
// Node's built-ins come from process.getBuiltinModule (a require on a Node
// older than 20.16), not `import`: imported, a built-in's every lazy part is
// loaded (node:fs its promises, streams and watchers), a cost on every
// command's start (scripts/builtins.mjs does the same for the bundle).
// child_process is wanted only to hand over to another Node.
const builtin =
  process.getBuiltinModule?.bind(process) ?? (await import('node:module')).createRequire(import.meta.url);
const { existsSync, readFileSync } = builtin('node:fs');
const { homedir } = builtin('node:os');
const { dirname, isAbsolute, join } = builtin('node:path');
const { fileURLToPath } = builtin('node:url');

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
  relay(local);
} else {
  await run();
}

/**
 * Runs ii on the pinned Node and stays until it has ended, so the shell gets
 * its prompt back only then, with its exit status. Every signal this launcher
 * gets is passed on to it, as this process stands for it: `kill <pid>` or a
 * supervisor's SIGTERM reaches only this one. Ctrl-C and Ctrl-\ are the
 * exception while we hold the terminal: the terminal sent them to our whole
 * process group, the real ii already has its own, and a second copy would
 * read as a second Ctrl-C (ii run abandons its jobs on that). A SIGHUP or
 * SIGTERM that reaches both (a closed terminal) arrives twice, which ii takes
 * as one. Without siginfo we cannot tell who sent a signal: a SIGINT sent to
 * our whole group while it does not hold a terminal (`kill -INT -<pgid>`)
 * reaches ii twice.
 */
function relay(node) {
  const { spawn } = builtin('node:child_process');
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  const signals = ['SIGINT', 'SIGQUIT', 'SIGTERM', 'SIGHUP', 'SIGUSR2', 'SIGALRM'];
  const pass = (sig) => {
    if ((sig === 'SIGINT' || sig === 'SIGQUIT') && holdsTerminal()) return;
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  };
  for (const sig of signals) process.on(sig, pass);
  child.on('error', (err) => {
    process.stderr.write(`ii: could not start ${node}: ${err.message}\n`);
    process.exit(2);
  });
  child.on('exit', (code, sig) => {
    for (const s of signals) process.off(s, pass);
    // Ended by a signal: end by the same one, so the shell sees what the user did (130 for Ctrl-C).
    if (sig) process.kill(process.pid, sig);
    process.exit(code ?? 1);
  });
}

/** Whether our process group is the terminal's foreground group (a Ctrl-C then reached the real ii too). */
function holdsTerminal() {
  let pgrp, tpgid;
  try {
    // /proc/self/stat: pid (comm) state ppid pgrp session tty_nr tpgid ...; comm may hold spaces.
    const f = readFileSync('/proc/self/stat', 'utf8');
    [, , pgrp, , , tpgid] = f.slice(f.lastIndexOf(')') + 2).split(' ');
  } catch {
    const { spawnSync } = builtin('node:child_process');
    const r = spawnSync('ps', ['-o', 'pgid=,tpgid=', '-p', String(process.pid)], { encoding: 'utf8' });
    [pgrp, tpgid] = (r.stdout ?? '').trim().split(/\s+/);
  }
  return Number(tpgid) > 0 && tpgid === pgrp;
}

async function run() {
  // node:sqlite prints an ExperimentalWarning on every start; it says nothing to
  // a user, so drop that one kind and keep every other warning.
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    if (w.name === 'ExperimentalWarning') return;
    process.stderr.write(`${w.name}: ${w.message}\n`);
  });

  // Cache compiled bytecode between runs (Node's on-disk compile cache): loading
  // the CLI's modules is most of a short command's time, and this halves it.
  // It lives in the user's cache dir (XDG), not the shared /tmp Node picks by
  // default; NODE_COMPILE_CACHE still chooses, NODE_DISABLE_COMPILE_CACHE=1
  // turns it off. A cache that cannot be written only costs the saving: Node
  // reports it in the status, which is not ours to print.
  const { enableCompileCache } = builtin('node:module');
  try {
    enableCompileCache?.(process.env.NODE_COMPILE_CACHE ? undefined : compileCacheDir());
  } catch {}

  // dist/cli is the CLI bundled into a few files (npm run build: tsc, then
  // rolldown); loading ~90 separate modules was a third of a short command's time.
  // start.js runs ii job list itself and loads main.js, the commander program, for the rest.
  const entry = join(root, 'dist', 'cli', 'start.js');
  if (!existsSync(entry)) {
    process.stderr.write(`ii: ${entry} is missing: run \`npm install\` (or \`npm run build\`) in ${root}.\n`);
    process.exit(2);
  }
  const { start } = await import(entry);
  await start(process.argv);
}

/** $XDG_CACHE_HOME/incrementum/compile-cache (~/.cache when unset or relative, as the XDG spec says). */
function compileCacheDir() {
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'incrementum', 'compile-cache');
}
