// Workspace readiness: a fresh workspace of a Node project gets its
// node_modules either by the plain setup command (`npm ci`, offline from the
// npm cache) or by reuse, a clone of the checkout's node_modules when the
// lockfiles match (src/session/dependency-reuse.ts). The project is this
// repository's own package.json and lockfile (~700 MB, ~14k files of
// node_modules). The figure is reuse's time as a ratio to npm ci's, both
// measured here, in the same run; the goal is ready in <= 2 s for 200 MB.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { round } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { setupWorkspace } = await import(join(root, 'dist', 'src', 'job', 'workspace-setup.js'));

function du(dir) {
  return Number(execFileSync('du', ['-sm', dir], { encoding: 'utf8' }).split('\t')[0]);
}

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-setup-'));
  try {
    const ws = (name) => {
      const d = join(tmp, name);
      mkdirSync(d);
      for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(root, f), join(d, f));
      return d;
    };
    const env = {
      ...process.env,
      npm_config_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    };
    // The plain setup command, with scripts off (prepare would build the CLI).
    const cmd = 'npm ci --ignore-scripts --no-audit --no-fund --offline';
    const plain = ws('plain');
    let t = performance.now();
    const ran = await setupWorkspace({
      workspace: plain,
      checkout: root,
      commands: [cmd],
      reuse: 'off',
      env,
    });
    const npmMs = performance.now() - t;
    if (ran.kind !== 'done') throw new Error(`${cmd} failed: ${ran.tail ?? ran.kind}`);
    // Reuse: the checkout is the one npm ci just installed (installed after
    // its lockfile, as reuse requires), and the new workspace has the same lockfile.
    const reused = ws('reused');
    t = performance.now();
    const r = await setupWorkspace({
      workspace: reused,
      checkout: plain,
      commands: ['npm ci'],
      reuse: 'clone',
      env,
    });
    const reuseMs = performance.now() - t;
    if (r.kind !== 'done' || r.reused.length !== 1) throw new Error(`no reuse: ${JSON.stringify(r)}`);
    const mb = du(join(reused, 'node_modules'));
    return [
      { name: `npm ci (${mb} MB node_modules)`, value: round(npmMs / 1000), unit: 's', goal: '' },
      {
        name: 'reuse: clone the checkout node_modules',
        value: round(reuseMs / 1000),
        unit: 's',
        floor: round(npmMs / 1000),
        ratio: round(reuseMs / npmMs),
        goal: '<= 2 s for 200 MB',
      },
    ];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
