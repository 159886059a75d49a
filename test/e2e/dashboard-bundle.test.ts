// The dashboard runs Ink from its own bundle (rolldown.config.mjs): loading
// Ink as a package read ~550 files, 415 of them es-toolkit's compat build
// for one throttle, and left the board's RSS ~6 MB higher
// (bench/dashboard.bench.js). React, its reconciler and scheduler stay
// packages: one React, each of them picking its build by NODE_ENV.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

it("the dashboard's entry loads Ink and what it imports from dist/cli, React from its packages", () => {
  const hook = join(tmp.path, 'hook.mjs');
  const out = join(tmp.path, 'loaded.txt');
  writeFileSync(
    hook,
    `import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const seen = [];
registerHooks({ load(url, ctx, next) { seen.push(url); return next(url, ctx); } });
process.on('exit', () => writeFileSync(${JSON.stringify(out)}, seen.join('\\n')));
`,
  );
  const entry = join(ROOT, 'dist', 'cli', 'dashboard.js');
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      hook,
      '--input-type=module',
      '-e',
      `const d = await import(${JSON.stringify(entry)});
       const [ink, { Dashboard }] = await d.loadView();
       if (typeof ink.render !== 'function' || typeof Dashboard !== 'function') process.exit(1);`,
    ],
    { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_ENV: undefined } },
  );
  expect(r.status, r.stderr).toBe(0);
  const packages = new Set(
    readFileSync(out, 'utf8')
      .split('\n')
      .map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1])
      .filter((p) => p !== undefined),
  );
  expect(packages).not.toContain('ink');
  expect(packages).not.toContain('es-toolkit');
  expect(packages).not.toContain('yoga-layout');
  expect(packages).toContain('react');
  expect(packages).toContain('react-reconciler');
});

it("Yoga's WebAssembly is read without fetch: the board never loads Node's HTTP client (undici)", () => {
  // Yoga's loader fetch()es its own data: URL wherever fetch exists; the
  // first use of fetch loads undici, ~10 MB of the board's RSS
  // (rolldown.config.mjs, yoga-without-fetch).
  const entry = join(ROOT, 'dist', 'cli', 'dashboard.js');
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const d = await import(${JSON.stringify(entry)});
       const [{ render, Text }] = await d.loadView();
       const { createElement } = await import('react');
       const { Writable } = await import('node:stream');
       let out = '';
       const stdout = Object.assign(new Writable({ write(c, _e, cb) { out += c; cb(); } }), { columns: 40, rows: 5 });
       const app = render(createElement(Text, null, 'laid out by yoga'), { stdout, patchConsole: false });
       app.unmount();
       if (!out.includes('laid out by yoga')) process.exit(2);
       process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => /undici/.test(m))));`,
    ],
    { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_ENV: 'production' } },
  );
  expect(r.status, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual([]);
});
