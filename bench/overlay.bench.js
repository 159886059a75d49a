// A workspace's dependencies by overlay ([workspace] reuse = "overlay", in
// the job's sandbox: src/proc/sandbox/overlay.ts) against a plain copy of
// them ("clone", which on a filesystem without reflinks, ext4 here, is a
// copy), for a project with a 200 MB node_modules (4,000 files of 50 KB in
// 400 packages), both through setupWorkspace, in the same run. The overlay
// copies nothing: its time is the upper layer's folders and one trial mount,
// whatever the size. Goal (issue 28): ready in <= 0.5 s. After each, a
// sandboxed command reads a file of the dependencies in the workspace, so
// what is timed is a workspace that works.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { round } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (...p) => join(root, 'dist', 'src', ...p);
const { setupWorkspace } = await import(dist('job', 'workspace-setup.js'));
const { jobSandbox } = await import(dist('proc', 'sandbox', 'sandbox.js'));
const { probeSandbox } = await import(dist('proc', 'sandbox', 'probe.js'));
const { Config } = await import(dist('model', 'config.js'));

const PACKAGES = 400;
const FILES = 10;
const SIZE = 50 * 1024;

export async function run() {
  const probe = probeSandbox();
  if (!probe.ok) return [{ name: 'skipped', value: probe.reason, unit: '', goal: probe.fix }];
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-overlay-'));
  try {
    const lock = JSON.stringify({ name: 'p', lockfileVersion: 3, packages: {} }) + '\n';
    const pkg = JSON.stringify({ name: 'p', version: '1.0.0', dependencies: {} }) + '\n';
    const project = (dir) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'package.json'), pkg);
      writeFileSync(join(dir, 'package-lock.json'), lock);
      return dir;
    };
    // The checkout and its install (newer than its lockfile, as reuse requires).
    const checkout = project(join(tmp, 'checkout'));
    const body = Buffer.alloc(SIZE);
    for (let p = 0; p < PACKAGES; p++) {
      const d = join(checkout, 'node_modules', `pkg-${p}`);
      mkdirSync(d, { recursive: true });
      for (let i = 0; i < FILES; i++) {
        body.writeUInt32LE(p * FILES + i, 0); // no two files alike
        writeFileSync(join(d, `f${i}.js`), body);
      }
    }
    const marker = join(checkout, 'node_modules', '.package-lock.json');
    writeFileSync(marker, lock);
    const later = new Date(Date.now() + 5_000);
    utimesSync(marker, later, later);
    execFileSync('sync');
    const mb = Number(
      execFileSync('du', ['-sm', join(checkout, 'node_modules')], { encoding: 'utf8' }).split('\t')[0],
    );

    const stateDir = join(tmp, 'state', 'incrementum');
    const config = Config.parse({});
    const ready = async (name, reuse) => {
      const ws = project(join(stateDir, 'workspaces', 'r', name));
      const sandbox = jobSandbox({
        config,
        repoRoot: checkout,
        workspace: ws,
        stateDir,
        agent: { name: '', command: [] },
      });
      const t = performance.now();
      const r = await setupWorkspace({ workspace: ws, checkout, commands: ['npm ci'], reuse, sandbox });
      const ms = performance.now() - t;
      if (r.kind !== 'done' || r.reused.length !== 1)
        throw new Error(`${reuse}: no reuse: ${JSON.stringify(r)}`);
      // A workspace that works: the dependencies are there inside the sandbox.
      const w = sandbox.wrap(
        'cat',
        [join(ws, 'node_modules', `pkg-${PACKAGES - 1}`, `f${FILES - 1}.js`)],
        process.env,
      );
      const got = execFileSync(w.command, w.args, { env: w.env, cwd: ws });
      if (got.length !== SIZE) throw new Error(`${reuse}: the workspace's dependencies are not there`);
      return ms;
    };
    const copyMs = await ready('copy', 'clone');
    const overlayMs = await ready('overlay', 'overlay');
    return [
      {
        name: `plain copy (clone) of ${mb} MB node_modules`,
        value: round(copyMs / 1000),
        unit: 's',
        goal: '',
      },
      {
        name: 'overlay of the same',
        value: round(overlayMs / 1000),
        unit: 's',
        floor: round(copyMs / 1000),
        ratio: round(overlayMs / copyMs),
        goal: '<= 0.5 s for 200 MB',
      },
    ];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
