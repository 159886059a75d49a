// How many git processes each iteration of a job starts: the runner's cost
// per iteration is mostly git's start-up, so a new process per iteration is a
// regression this counts (never times). The built CLI, real git traced with
// GIT_TRACE (one `built-in: git …` line per git process, stamped with its
// start), the scripted agent; the iterations' bounds are the job's own
// `stage → implementing` events, as bench/runner.bench.js measures them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-gitcount-');
});
afterEach(() => f.cleanup());

/** The bench's job: changes requested, tests failed, then three committed iterations (two of them new changes). */
const SCENARIO = {
  implement: [
    { actions: [write('a.txt', 'a\n')] },
    { actions: [write('a.txt', 'a, better\n'), write('FAIL', 'x\n')] },
    { actions: [{ type: 'delete', path: 'FAIL' }, write('a.txt', 'a, best\n')] },
    { actions: [write('b.txt', 'b\n'), write('src/c.txt', 'c\n')] },
    { actions: [write('b.txt', 'b, documented\n')] },
  ],
  review: [
    verdict('REQUEST_CHANGES', 'Not yet.\n\nMake a.txt better.'),
    verdict('ACCEPT', ''),
    verdict('ACCEPT', ''),
  ],
  'commit-message': [{ actions: [{ type: 'commit_message', text: 'feat: a' }] }],
};

/**
 * The most git processes an iteration may start, by kind (git's own children
 * count too). HEAD and object reads, ref writes, file lists and commits go
 * through four long-lived processes (cat-file, update-ref, diff-tree,
 * hash-object); each iteration runs add and write-tree, whose tree against
 * HEAD's also says whether the pass changed anything (no status). The job's
 * first iteration starts three of the four, takes protocol files out of the
 * index, and commits with commit-tree (which shows who commits); the second
 * starts hash-object. Changes requested 7, tests failed 3, committed 2,
 * committed in a new change 2 (twice).
 */
const MOST = [7, 3, 2, 2, 2];

/** Seconds since midnight UTC of a GIT_TRACE line (TZ=UTC), to the microsecond. */
const traceTime = (line: string) => {
  const m = /^(\d\d):(\d\d):(\d\d\.\d+) /.exec(line);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : NaN;
};
const dayTime = (iso: string) => {
  const d = new Date(iso);
  return d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds() + d.getUTCMilliseconds() / 1000;
};

it('each iteration starts no more git processes than it needs', () => {
  f.setup(['test -f README.md', 'test ! -e FAIL']);
  const trace = join(f.tmp.path, 'git-trace');
  Object.assign(f.env, { GIT_TRACE: trace, TZ: 'UTC' });
  const r = f.run(['job', 'do', '--title', 'a, better'], f.scenario('five', SCENARIO));
  expect(r.code, r.stderr).toBe(0);
  const id = jobIdFrom(r.stderr);
  const events = readFileSync(join(f.tmp.path, 'state', 'incrementum', 'jobs', id, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; ts: string; to?: string });
  const bounds = events
    .filter((e) => e.type === 'stage' && e.to === 'implementing')
    .map((e) => dayTime(e.ts));
  // The five iterations, then the empty pass that ends the job.
  expect(bounds).toHaveLength(6);
  const gits = readFileSync(trace, 'utf8')
    .split('\n')
    .filter((l) => l.includes('trace: built-in: git '))
    .map((l) => ({ t: traceTime(l), cmd: l.slice(l.indexOf('built-in: git ') + 14) }));
  const per = MOST.map((_, i) => gits.filter((g) => g.t >= bounds[i]! && g.t < bounds[i + 1]!));
  const counts = per.map((p) => p.length);
  const listing = per
    .map((p, i) => `iteration ${i + 1}:\n${p.map((g) => `  git ${g.cmd}`).join('\n')}`)
    .join('\n');
  for (let i = 0; i < MOST.length; i++)
    expect(
      counts[i],
      `iteration ${i + 1} started ${counts[i]} git processes\n${listing}`,
    ).toBeLessThanOrEqual(MOST[i]!);
});
