// ii dashboard in a real terminal (tmux): it opens in the alternate screen,
// shows a job written by another process and moves its card as the job
// moves, drills into its iteration history, and quits leaving the terminal
// as it was.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { repoSlug } from '../../src/state/paths.js';
import { II } from '../helpers/cli.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const WRITER = join(import.meta.dirname, '..', 'fixtures', 'dash-writer.mjs');
const cleanups: (() => void)[] = [];
afterEach(() =>
  cleanups
    .splice(0)
    .reverse()
    .forEach((c) => c()),
);

it.skipIf(!hasTmux)('follows a job written by another process, drills in, and quits cleanly', async () => {
  const tmp = tempDir('ii-tmux-');
  cleanups.push(tmp.cleanup);
  const repo = join(tmp.path, 'repo');
  execFileSync('mkdir', [repo]);
  gitRepo(repo);
  const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: repo, encoding: 'utf8' }).trim();
  const stateHome = join(tmp.path, 'state');
  const write = (...args: string[]) =>
    execFileSync(process.execPath, [WRITER, ...args], {
      env: { ...process.env, XDG_STATE_HOME: stateHome },
      encoding: 'utf8',
    }).trim();
  // A first job, so the state (and its database) exists before the dashboard starts.
  const first = write('create', repoSlug(root), 'first todo', String(process.pid));

  const t = new Tmux(tmp.path);
  cleanups.push(() => t.kill());
  t.start([process.execPath, II, 'dashboard'], {
    cwd: repo,
    env: { XDG_STATE_HOME: stateHome, NO_COLOR: '1', CI: 'true', PATH: process.env.PATH ?? '' },
  });
  const out = join(tmp.path, 'terminal.out');
  t.record(out);
  // At 100 columns the jobs board's seven columns use their short names (Impl, Test, Rev, Done).
  await t.screenWith('incrementum · Jobs', 'first todo', 'Impl (1)');
  expect(t.get('#{alternate_on}')).toBe('1');

  // Another process starts a job: its card appears, then moves column by column.
  const id = write('create', repoSlug(root), 'second todo', String(process.pid));
  await t.screenWith('second todo', 'Impl (2)');
  write('change', id, 'Ichange1');
  write('commit', id, 'aaaaaaa1', 'true');
  write('stage', id, 'testing');
  await t.screenWith('Test (1)', 'Impl (1)');
  write('stage', id, 'reviewing');
  await t.screenWith('Rev (1)', 'reviewing · c1 i1');
  write('review', id, 'REQUEST_CHANGES');
  write('commit', id, 'aaaaaaa2', 'true');
  write('review', id, 'ACCEPT');
  write('finish', id, 'completed');
  await t.screenWith('Done (1)', '1 done');

  // Drill into the finished job: its changes, the change's iterations, one iteration.
  // Filter down to it, then drill in.
  t.send('/');
  await t.screenWith('filter:');
  t.send('-l', 'second');
  await t.screenWith('filter: second');
  t.send('Enter');
  await t.screenWith('filter "second"');
  expect(t.capture()).not.toContain('first todo');
  t.send('Enter');
  await t.screenWith(`job ${id}`, 'Committed (1)');
  t.send('Enter');
  await t.screenWith('change 1 (Ichange1)', 'Rejected (1)', 'Accepted (1)');
  t.send('Enter');
  await t.screenWith('iteration', 'draft message:', 'review:');
  t.send('Escape');
  await t.screenWith('Rejected (1)');
  t.send('Escape');
  await t.screenWith(`job ${id}`, 'Committed (1)');
  t.send('Escape');
  await t.screenWith('Done (1)', 'filter "second"');
  t.send('Escape');
  await t.screenWith('incrementum · Jobs', 'first todo', 'second todo');
  void first;

  t.send('q');
  expect(await t.exitStatus()).toBe(0);
  expect(t.get('#{alternate_on}')).toBe('0');
  expect(t.capture()).not.toContain('incrementum · Jobs');
  // The last word on the cursor is "show", and the alternate screen was left.
  const written = readFileSync(out, 'latin1');
  expect(written.lastIndexOf('\x1b[?25h')).toBeGreaterThan(written.lastIndexOf('\x1b[?25l'));
  expect(written.lastIndexOf('\x1b[?1049l')).toBeGreaterThan(written.lastIndexOf('\x1b[?1049h'));
});
