// A cold runner of ii run's starts its job at the floor (proc/priority.ts
// bootLow): its own session and each session it starts meanwhile at 19, all
// raised to the jobs' level at the first prompt (endBootLow); a runner that
// steps aside first (its job ended before any prompt) is not raised again.
// Run in a session of its own at nice 5, as ii run starts a runner; as root
// only: Linux refuses a person's session changes past one a tenth of a
// second, machine-wide (the tests running beside this one make them too).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const priority = pathToFileURL(join(ROOT, 'dist/src/proc/priority.js')).href;

const script = `
const p = await import(${JSON.stringify(priority)});
const { spawn } = await import('node:child_process');
const { readFileSync } = await import('node:fs');
const read = (pid) => Number(/nice (-?\\d+)/.exec(readFileSync('/proc/' + pid + '/autogroup', 'utf8'))[1]);
const kids = [];
const session = () => {
  const k = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  kids.push(k);
  p.niceSession(k.pid);
  return k.pid;
};
try {
  const before = read(process.pid);
  p.bootLow();
  const a = session();
  const during = [read(process.pid), read(a)];
  p.endBootLow();
  const after = [read(process.pid), read(a)];
  const b = session(); // after the start: at the jobs' level at once
  const later = read(b);
  p.bootLow();
  const c = session();
  p.stepAside();
  p.endBootLow(); // as its timer would, later: nothing to raise
  const stepped = [read(process.pid), read(c)];
  console.log(JSON.stringify({ before, during, after, later, stepped }));
} finally {
  for (const k of kids) process.kill(-k.pid, 'SIGKILL');
}
`;

it.skipIf(!existsSync('/proc/self/autogroup') || process.getuid?.() !== 0)(
  'a cold runner’s start is at the floor, its sessions too, raised to the jobs’ level at its first prompt, not after it steps aside',
  async () => {
    // nice(1) under setsid: the runner's own process at nice 5, leading a session (at nice 0 when made).
    const c = spawn('nice', ['-n', '5', process.execPath, '--input-type=module', '-e', script], {
      cwd: '/',
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise((r) => c.once('exit', r));
    expect(code, err).toBe(0);
    expect(JSON.parse(out)).toEqual({
      before: 0,
      during: [19, 19],
      after: [5, 5],
      later: 5,
      // Stepped aside: its own session at 5 + 10; the session started in its start stays at the floor.
      stepped: [15, 19],
    });
  },
);
