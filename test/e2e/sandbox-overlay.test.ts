// [workspace] reuse = "overlay" with the real bubblewrap: the checkout's
// node_modules is mounted read-only beneath an upper layer of the
// workspace's own, in every sandbox of the job. The tests see the
// dependencies without any install (npm ci could not run here: the
// dependency is in no registry), what the agent and the tests write into
// node_modules lands in the upper layer and never in the user's copy, the
// runner outside the sandbox sees only an empty folder (node_modules is not
// even ignored here: a clone would fail the job's leftovers check), and
// the upper layer goes with the workspace.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobEvent } from '../../src/model/event.js';
import { readEvents } from '../../src/state/events.js';
import { JobFixture, jobIdFrom, verdict } from '../helpers/job.js';
import { bwrap, noBwrapWhy as why } from '../helpers/bwrap.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-overlay-');
});
afterEach(() => f.cleanup());

const stateDir = () => join(f.env.XDG_STATE_HOME!, 'incrementum');
const ofType = (id: string, type: string) =>
  readEvents(stateDir(), id).values.filter((e: JobEvent) => e.type === type) as (JobEvent &
    Record<string, unknown>)[];

/** Every file and folder under `dir` with a hash of its bytes: equal strings, byte-identical trees. */
function tree(dir: string): string {
  const out: string[] = [];
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const p = join(e.parentPath, e.name);
    const rel = relative(dir, p);
    out.push(e.isFile() ? `${rel} ${createHash('sha256').update(readFileSync(p)).digest('hex')}` : `${rel}/`);
  }
  return out.sort().join('\n');
}

/**
 * A Node project whose test requires `dep`, a package only the checkout's
 * node_modules has; `workspace`: the [workspace] and [sandbox] lines.
 */
function project(workspace: string): string {
  const repo = f.setup(['node test.js'], { job: `\n${workspace}` });
  const pkg = { name: 'proj', version: '1.0.0', private: true, dependencies: { dep: '1.0.0' } };
  const lock = {
    name: 'proj',
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'proj', version: '1.0.0', dependencies: { dep: '1.0.0' } },
      'node_modules/dep': { version: '1.0.0' },
    },
  };
  writeFileSync(join(repo, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
  writeFileSync(join(repo, 'package-lock.json'), JSON.stringify(lock, null, 2) + '\n');
  // The test also writes into node_modules, as a test runner's cache does.
  writeFileSync(
    join(repo, 'test.js'),
    "const fs = require('fs');\nif (require('dep').answer !== 42) process.exit(1);\n" +
      "fs.mkdirSync('node_modules/.cache', { recursive: true });\n" +
      "fs.writeFileSync('node_modules/.cache/test-ran', 'yes');\nconsole.log('ok');\n",
  );
  f.git('add', '-A');
  f.git('commit', '-qm', 'a project with a dependency');
  // The user's install (not ignored, on purpose), newer than the lockfile.
  const dep = join(repo, 'node_modules', 'dep');
  mkdirSync(dep, { recursive: true });
  writeFileSync(join(dep, 'package.json'), '{"name":"dep","version":"1.0.0","main":"index.js"}\n');
  writeFileSync(join(dep, 'index.js'), 'module.exports = { answer: 42 };\n');
  writeFileSync(join(dep, 'LICENSE'), 'MIT\n');
  writeFileSync(join(repo, 'node_modules', '.package-lock.json'), JSON.stringify(lock) + '\n');
  const later = new Date(Date.now() + 5_000);
  utimesSync(join(repo, 'node_modules', '.package-lock.json'), later, later);
  return repo;
}

describe.skipIf(!bwrap)(`dependency overlay (bubblewrap)${bwrap ? '' : ` — skipped: ${why}`}`, () => {
  it("the tests see the checkout's node_modules, writes into it reach only the workspace's upper layer, which goes with the workspace", async () => {
    const repo = project('[workspace]\nsetup = ["npm ci"]\nreuse = "overlay"\n');
    const before = tree(join(repo, 'node_modules'));
    const results = join(f.tmp.path, 'agent', 'results');
    mkdirSync(results, { recursive: true });
    const sh = (name: string, cmd: string) => ({
      type: 'shell',
      command: `(${cmd}) >"${results}/${name}.out" 2>&1; echo $? >"${results}/${name}.rc"`,
    });
    const scenario = join(f.tmp.path, 'agent', 'scenario.json');
    writeFileSync(
      scenario,
      JSON.stringify({
        implement: [
          {
            actions: [
              sh('sees', 'cat node_modules/dep/index.js'),
              // In place, a new file, a deletion: each would change the user's copy through a hard link.
              sh('write', 'echo "// patched" >> node_modules/dep/index.js'),
              sh('new', 'echo x > node_modules/dep/extra.txt'),
              sh('delete', 'rm node_modules/dep/LICENSE'),
              sh('direct', `echo x > "${repo}/node_modules/dep/direct.txt"`),
              { type: 'write', path: 'feature.txt', content: 'the ordinary change\n' },
              sh('commit', 'git add feature.txt && git commit -q -m "feat: add feature"'),
            ],
          },
        ],
        review: [verdict('ACCEPT', 'fine')],
      }),
    );
    // ii doctor --tests sets up a scratch workspace as a job would: by overlay, gone after.
    const doctor = f.run(['doctor', '--tests']);
    expect(doctor.stdout + doctor.stderr).toMatch(
      /node_modules from the checkout instead of `npm ci` \(overlay/,
    );
    expect(readdirSync(join(stateDir(), 'overlays', 'other'))).toEqual([]);
    const r = await f.runAsync(['job', 'do', '--title', 'overlay'], scenario);
    const rc = (name: string) => readFileSync(join(results, `${name}.rc`), 'utf8').trim();
    const out = (name: string) => readFileSync(join(results, `${name}.out`), 'utf8');
    expect(r.stderr).toContain('completed');
    expect(r.code).toBe(0);
    const id = jobIdFrom(r.stderr);
    // No install ran: the checkout's node_modules stood in for npm ci, as an overlay.
    expect(ofType(id, 'setup_start')).toEqual([]);
    expect(ofType(id, 'setup_reused')).toMatchObject([
      { command: 'npm ci', dir: 'node_modules', method: 'overlay' },
    ]);
    // The agent saw the dependency and could write over it in the workspace.
    expect(out('sees')).toContain('answer: 42');
    for (const name of ['write', 'new', 'delete']) expect(rc(name), `${name}: ${out(name)}`).toBe('0');
    // The checkout's own folder stays read-only.
    expect(rc('direct')).not.toBe('0');
    // The baseline and the iteration's tests needed the dependency, and passed.
    expect(ofType(id, 'test_end').map((e) => [e.exit_code, e.baseline ?? false])).toEqual([
      [0, true],
      [0, false],
    ]);
    // The user's copy is byte-identical.
    expect(tree(join(repo, 'node_modules'))).toBe(before);
    // What the job wrote is in the workspace's upper layer, in the state dir.
    const overlays = join(stateDir(), 'overlays');
    const [slug] = readdirSync(overlays).filter((n) => n !== 'other');
    const ws = f.show(id).workspace_path!;
    const upper = join(overlays, slug!, basename(ws), 'node_modules', 'upper');
    expect(readFileSync(join(upper, 'dep', 'extra.txt'), 'utf8')).toBe('x\n');
    expect(readFileSync(join(upper, 'dep', 'index.js'), 'utf8')).toContain('// patched');
    expect(readFileSync(join(upper, '.cache', 'test-ran'), 'utf8')).toBe('yes');
    // The job's commits hold only its change (nothing of node_modules reached git).
    const files = f.show(id).changes.flatMap((c) => c.commits.flatMap((k) => k.files.map((x) => x.path)));
    expect([...new Set(files)]).toEqual(['feature.txt']);

    // Removed with the workspace.
    const pruned = f.run(['workspace', 'prune']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(existsSync(ws)).toBe(false);
    expect(existsSync(join(overlays, slug!, basename(ws)))).toBe(false);
  }, 120_000);

  it('a new job on the same workspace starts from a fresh upper layer', async () => {
    project('[workspace]\nsetup = ["npm ci"]\n'); // overlay: the default in the sandbox
    const scenario = (name: string, cmd: string) =>
      f.scenario(name, {
        implement: [
          {
            actions: [
              { type: 'shell', command: cmd },
              { type: 'write', path: `${name}.txt`, content: 'x\n' },
              { type: 'shell', command: `git add ${name}.txt && git commit -q -m "feat: ${name}"` },
            ],
          },
        ],
        review: [verdict('ACCEPT', 'fine')],
      });
    const first = f.run(['job', 'do', '--title', 'first'], scenario('first', 'echo x > node_modules/mark'));
    expect(first.stderr).toContain('completed');
    const seen = join(f.tmp.path, 'seen.txt');
    const second = f.run(
      ['job', 'do', '--title', 'second'],
      scenario('second', `ls -A node_modules > "${seen}"`),
    );
    expect(second.stderr).toContain('completed');
    const id2 = jobIdFrom(second.stderr);
    expect(ofType(id2, 'setup_reused')).toMatchObject([{ method: 'overlay' }]);
    // Same workspace, but nothing of the first job's writes.
    expect(f.show(id2).workspace_path).toBe(f.show(jobIdFrom(first.stderr)).workspace_path);
    expect(readFileSync(seen, 'utf8').split('\n')).not.toContain('mark');
    expect(readFileSync(seen, 'utf8').split('\n')).toContain('dep');
  }, 120_000);
});

describe('dependency overlay without the sandbox', () => {
  it('clones instead, and says so', () => {
    const repo = project('[workspace]\nsetup = ["npm ci"]\nreuse = "overlay"\n\n[sandbox]\nmode = "off"\n');
    writeFileSync(join(repo, '.gitignore'), 'node_modules/\n'); // a clone is real files in the workspace
    f.git('add', '.gitignore');
    f.git('commit', '-qm', 'ignore node_modules');
    const s = f.scenario('s', {
      implement: [
        {
          actions: [
            { type: 'write', path: 'feature.txt', content: 'x\n' },
            { type: 'shell', command: 'git add feature.txt && git commit -q -m "feat: x"' },
          ],
        },
      ],
      review: [verdict('ACCEPT', 'fine')],
    });
    const r = f.run(['job', 'do', '--title', 'unsandboxed'], s);
    expect(r.stderr).toContain('completed');
    const id = jobIdFrom(r.stderr);
    expect(ofType(id, 'setup_reused')).toMatchObject([{ method: 'clone' }]);
    const said = ofType(id, 'info').map((e) => String(e.message));
    expect(said.filter((m) => m.includes('clones instead'))).toEqual([
      '[workspace] reuse = "overlay" clones instead: agents are not sandboxed',
    ]);
    expect(existsSync(join(stateDir(), 'overlays'))).toBe(false);
  }, 120_000);
});
