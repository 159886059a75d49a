// A lowered runner lowers each session it starts (niceSession): Linux takes
// one autogroup change a tenth of a second from a person's process (without
// CAP_SYS_ADMIN) and refuses the rest, so of the sessions ii run's runners
// start together only the first was lowered, unless root ran them. Run here as
// a person would: as nobody when the tests run as root (CI), through setpriv.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const hasAutogroups = existsSync('/proc/self/autogroup');
const asRoot = process.getuid?.() === 0;
const asNobody = (argv: string[]) => ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...argv];
const priority = join(ROOT, 'dist/src/proc/priority.js');
/** As root: whether nobody can run this checkout's node on its build (not under a 0700 home, say). */
const canDropRoot =
  existsSync('/usr/bin/setpriv') &&
  (!asRoot ||
    spawnSync(
      'setpriv',
      asNobody([process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(priority)})`]).slice(1),
      { cwd: '/' },
    ).status === 0);

// Starts six sessions at once, lowers each to 10 with niceSession, and prints
// their autogroup nice values once all read 10, or after 20 s whatever they read.
const script = `
const { niceSession } = await import(${JSON.stringify(pathToFileURL(priority).href)});
const { spawn } = await import('node:child_process');
const { readFileSync } = await import('node:fs');
const kids = Array.from({ length: 6 }, () => spawn('sleep', ['30'], { detached: true, stdio: 'ignore' }));
try {
  for (const k of kids) niceSession(k.pid, 10);
  const read = () => kids.map((k) => Number(/nice (-?\\d+)/.exec(readFileSync('/proc/' + k.pid + '/autogroup', 'utf8'))[1]));
  const until = Date.now() + 20_000;
  while (Date.now() < until && read().some((n) => n !== 10)) await new Promise((r) => setTimeout(r, 20));
  console.log(JSON.stringify(read()));
} finally {
  for (const k of kids) process.kill(-k.pid, 'SIGKILL');
}
`;

it.skipIf(!hasAutogroups || (asRoot && !canDropRoot))(
  'lowers every session it is given, though Linux takes one change a tenth of a second from a person',
  () => {
    const node = [process.execPath, '--input-type=module', '-e', script];
    const argv = asRoot ? asNobody(node) : node;
    const r = spawnSync(argv[0]!, argv.slice(1), { cwd: '/', encoding: 'utf8', timeout: 40_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([10, 10, 10, 10, 10, 10]);
  },
);
