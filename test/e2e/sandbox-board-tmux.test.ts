// The board says, in its header, when [sandbox] mode = "auto" runs agents
// unsandboxed (no bubblewrap on PATH): the jobs it starts are not confined.
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const cleanups: (() => void)[] = [];
afterEach(() =>
  cleanups
    .splice(0)
    .reverse()
    .forEach((c) => c()),
);

it.skipIf(!hasTmux)('the header says agents are not sandboxed when bubblewrap is missing', async () => {
  const tmp = tempDir('ii-tmux-sandbox-');
  cleanups.push(tmp.cleanup);
  const repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo);
  const bin = join(tmp.path, 'bin');
  mkdirSync(bin);
  const git = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  symlinkSync(git, join(bin, 'git'));
  const t = new Tmux(tmp.path);
  cleanups.push(() => t.kill());
  // PATH through env(1): tmux gives its session command the client's own PATH.
  t.start(['/usr/bin/env', `PATH=${bin}`, process.execPath, II, 'dashboard'], {
    cwd: repo,
    env: { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: tmp.path, NO_COLOR: '1', CI: 'true' },
    columns: 120,
  });
  await t.screenWith('incrementum · Jobs', 'agents not sandboxed: bubblewrap not installed');
});
