// stdoutBytes (cli/output.ts), how ii job list --json writes its listing:
// by write(2) on fd 1 in blocks, every byte arriving in order whether the
// pipe is blocking or was made non-blocking (a stderr Node made on the same
// pipe, under 2>&1, answers EAGAIN: the rest then goes through
// process.stdout), and a reader that went away ends the command quietly.
// Also guardStderrWhenMade: stderr's guard installed when something first
// makes process.stderr, so a closed stderr ends ii job list as quietly.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir()));
afterEach(() => tmp.cleanup());

/** A child writing 4 MB (parts of 1 byte to 200 KB) through stdoutBytes, process.stdout made first if `nonBlocking`. */
function writer(nonBlocking: boolean): string {
  const script = join(tmp.path, 'writer.mjs');
  writeFileSync(
    script,
    `import { guardStderr, stdoutBytes } from ${JSON.stringify(join(ROOT, 'dist', 'src', 'cli', 'output.js'))};
guardStderr();
${nonBlocking ? "process.stdout.on('error', () => {});" : ''}
const out = stdoutBytes();
let n = 0;
for (const size of [1, 100, 65535, 65537, 200000, 3]) for (let k = 0; k < 6; k++) {
  out.put(Buffer.alloc(size, 97 + (n++ % 26)));
}
out.end(Buffer.from('\\n'));
`,
  );
  return script;
}

const expected = (() => {
  const parts: Buffer[] = [];
  let n = 0;
  for (const size of [1, 100, 65535, 65537, 200000, 3])
    for (let k = 0; k < 6; k++) parts.push(Buffer.alloc(size, 97 + (n++ % 26)));
  parts.push(Buffer.from('\n'));
  return Buffer.concat(parts);
})();

/** Runs `script`, reading its stdout slowly at first so the pipe fills; its exit code, output and stderr. */
function run(script: string, o: { closeAfter?: number } = {}) {
  return new Promise<{ code: number | null; out: Buffer; err: string }>((resolve) => {
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let got = 0;
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.pause();
    // Let the writer meet a full pipe before anything is read.
    setTimeout(() => child.stdout.resume(), 300);
    child.stdout.on('data', (d: Buffer) => {
      chunks.push(d);
      got += d.length;
      if (o.closeAfter !== undefined && got >= o.closeAfter) child.stdout.destroy();
    });
    child.on('close', (code) => resolve({ code, out: Buffer.concat(chunks), err }));
  });
}

describe('stdoutBytes', () => {
  it('writes every byte in order to a blocking pipe', async () => {
    const r = await run(writer(false));
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out.equals(expected)).toBe(true);
  });

  it('writes every byte in order to a pipe Node made non-blocking (EAGAIN: the rest through process.stdout)', async () => {
    const r = await run(writer(true));
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out.equals(expected)).toBe(true);
  });

  it('a reader that went away ends it quietly, exit 0', async () => {
    for (const nonBlocking of [false, true]) {
      const r = await run(writer(nonBlocking), { closeAfter: 70_000 });
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
    }
  });
});

describe('guardStderrWhenMade', () => {
  it('guards stderr once it is made: a reader gone from stderr ends it quietly, exit 0', async () => {
    const script = join(tmp.path, 'stderr.mjs');
    writeFileSync(
      script,
      `import { guardStderrWhenMade } from ${JSON.stringify(join(ROOT, 'dist', 'src', 'cli', 'output.js'))};
guardStderrWhenMade();
// Made by Node's own getter, which is back in place: the guard is on it once.
const made = process.stderr;
if (made !== process.stderr || made.listenerCount('error') !== 1) process.exit(5);
setTimeout(() => { for (let i = 0; i < 64; i++) process.stderr.write('x'.repeat(65536)); }, 200);
setTimeout(() => process.exit(0), 3000);
process.on('exit', (c) => { if (c === 0) process.getBuiltinModule('node:fs').writeFileSync(1, 'ended quietly'); });
`,
    );
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.destroy();
      child.on('close', (code) => resolve({ code, out }));
    });
    expect(r.code).toBe(0);
    expect(r.out).toBe('ended quietly');
  });
});
