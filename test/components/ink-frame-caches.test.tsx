// scripts/ink-frame-caches.mjs rewrites Ink's output.js and
// render-node-to-output.js (at install) so a frame reuses the last frame's
// tokenized text and cells. Here: the Ink the tests and the bundle load has
// them, and every frame the board draws through them is the frame Ink's own
// Output draws from the same writes (its text restored from the rewrites).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import Output from '../../node_modules/ink/build/output.js';
import { REWRITES, patchInk } from '../../scripts/ink-frame-caches.mjs';
import { frameWith, KEY, makeJob, REPO, dashboards } from '../helpers/dash-fixture.js';
import { tempDir, waitFor } from '../helpers/tmp.js';

const board = dashboards();
const ink = join(import.meta.dirname, '..', '..', 'node_modules', 'ink');
const build = join(ink, 'build');
// Inside node_modules, so its own imports (string-width, ansi-tokenize) resolve as Ink's do.
const pristineDir = join(ink, '..', '.cache', `ii-ink-pristine-${process.pid}`);
afterAll(() => rmSync(pristineDir, { recursive: true, force: true }));

type Op = { type: 'write' | 'clip' | 'unclip' };
type OutputLike = { get(): { output: string; height: number } };
type OutputClass = new (o: { width: number; height: number }) => OutputLike;

/** Ink's own output.js: the installed one with each rewrite undone. */
async function pristineOutput(): Promise<OutputClass> {
  let code = readFileSync(join(build, 'output.js'), 'utf8');
  for (const [from, to] of REWRITES['output.js']!) {
    expect(code.split(to).length).toBe(2);
    code = code.replace(to, () => from);
  }
  code = code.replace(/\/\/# sourceMappingURL=.*$/m, '');
  mkdirSync(pristineDir, { recursive: true });
  const file = join(pristineDir, 'output.js');
  writeFileSync(file, code);
  return ((await import(pathToFileURL(file).href)) as { default: OutputClass }).default;
}

/** Records each frame Ink's (rewritten) Output makes: its writes and what it drew. */
function recordFrames() {
  const frames: { width: number; height: number; ops: Op[]; output: string }[] = [];
  const proto = Output.prototype as unknown as { get(this: OutputLike): { output: string; height: number } };
  const get = proto.get;
  proto.get = function (this: OutputLike) {
    const r = get.call(this);
    const o = this as unknown as { width: number; height: number; operations: Op[] };
    frames.push({ width: o.width, height: o.height, ops: [...o.operations], output: r.output });
    return r;
  };
  return { frames, stop: () => void (proto.get = get) };
}

/** Each recorded frame drawn again by Ink's own Output from the same writes. */
function redrawn(Pristine: OutputClass, frames: ReturnType<typeof recordFrames>['frames']): string[] {
  return frames.map((f) => {
    const o = new Pristine({ width: f.width, height: f.height });
    (o as unknown as { operations: Op[] }).operations.push(...f.ops);
    return o.get().output;
  });
}

describe("Ink's frame caches (scripts/ink-frame-caches.mjs)", () => {
  it('are in the Ink that is installed', () => {
    for (const [file, rewrites] of Object.entries(REWRITES)) {
      const code = readFileSync(join(build, file), 'utf8');
      for (const [, to] of rewrites) expect(code).toContain(to);
    }
    // Run again, it changes nothing.
    expect(patchInk(ink)).toEqual([]);
  });

  it('refuse an Ink whose lines changed', () => {
    const t = tempDir('ii-ink-');
    try {
      mkdirSync(join(t.path, 'build'));
      writeFileSync(join(t.path, 'build', 'output.js'), 'export default class Output {}\n');
      expect(() => patchInk(t.path)).toThrow(/Ink changed: "class OutputCaches \{" not found once/);
    } finally {
      t.cleanup();
    }
  });

  it("draw the board's frames as Ink's own Output does, frame after frame", async () => {
    const Pristine = await pristineOutput();
    const fx = board.fixture();
    const s = fx.state;
    for (let i = 0; i < 30; i++)
      s.todos.create(REPO, {
        title: `todo ${i} ${'wide 漢字 '.repeat(i % 3)}${'long '.repeat(i % 7)}`,
        priority: i % 4,
      });
    s.todos.create(REPO, { title: 'evil \x1b[31m red \x1b[2J title' });
    makeJob(fx.state, { title: 'a job that ran' });
    const rec = recordFrames();
    try {
      const app = await board.render(fx, { columns: 100, rows: 24 });
      await frameWith(app.lastFrame, 'Todo (31)');
      // To the Backlog column (at 100 columns, Todo), down it and back: each key moves the cursor, so each draws a frame.
      for (const k of ['h', KEY.down, KEY.down, KEY.down, KEY.up, KEY.down]) {
        const n = rec.frames.length;
        app.stdin.write(k);
        await waitFor(() => rec.frames.length > n, 'a frame for the key', 5000, 5);
      }
      s.todos.create(REPO, { title: 'written elsewhere', priority: 0 });
      fx.sync.start();
      await fx.sync.ready();
      s.todos.create(REPO, { title: 'and another', priority: 0 });
      await frameWith(app.lastFrame, 'Todo (33)');
    } finally {
      rec.stop();
    }
    expect(rec.frames.length).toBeGreaterThan(3);
    expect(redrawn(Pristine, rec.frames)).toEqual(rec.frames.map((f) => f.output));
  });

  it('draw styled, wide and clipped text as Ink does, whatever was drawn before', async () => {
    const Pristine = await pristineOutput();
    const texts = [
      '\x1b[7minverse title\x1b[27m and plain',
      '\x1b[1m\x1b[31mbold red\x1b[39m\x1b[22m 漢字 wide',
      '\x1b[2mdim\x1b[22m 👍 emoji\nsecond line \x1b[4munder\x1b[24m',
      'plain text that runs past the clip edge of its box',
    ];
    const frame = (order: number[]) => {
      const draw = (o: OutputLike & { write: Output['write']; clip: Output['clip']; unclip(): void }) => {
        order.forEach((i, y) => {
          o.clip({ x1: 2, x2: 30, y1: 0, y2: 8 });
          o.write(1 + (i % 2), y * 2, texts[i]!, { transformers: [] });
          o.unclip();
          o.write(32, y, texts[i]!, { transformers: [(line: string, n: number) => `${n}:${line}`] });
        });
        return o.get().output;
      };
      return {
        patched: draw(new Output({ width: 80, height: 10 })),
        pristine: draw(new Pristine({ width: 80, height: 10 }) as never),
      };
    };
    for (const order of [
      [0, 1, 2, 3],
      [3, 2, 1, 0],
      [0, 1, 2, 3],
      [1, 1, 3],
      [0, 1, 2, 3],
    ]) {
      const f = frame(order);
      expect(f.patched).toBe(f.pristine);
    }
  });
});
