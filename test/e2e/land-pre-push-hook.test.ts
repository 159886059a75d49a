// The user's pre-push hook and incrementum's pushes, end to end with a shared
// bare remote: the job's own refs/incrementum/ pushes skip it (they go
// through while it refuses everything), a landing's push of the user's main
// runs it, and when it refuses, the landing fails saying what the hook said,
// with the remote's main, this clone's main and checkout as they were.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-pre-push-');
});
afterEach(() => f.cleanup());

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

describe("a landing and the user's pre-push hook", () => {
  it('the job pushes its refs past a refusing hook; the landing runs it and is refused, changing nothing', () => {
    f.setup(['test -f README.md'], { job: '\n[remote]\npush = true\n' });
    const bare = join(f.tmp.path, 'shared.git');
    git(f.tmp.path, 'clone', '-q', '--bare', f.repo, bare);
    f.git('remote', 'add', 'origin', bare);
    f.git('fetch', '-q', 'origin');
    const log = join(f.tmp.path, 'hook.log');
    const hook = join(f.repo, '.git', 'hooks', 'pre-push');
    writeFileSync(hook, `#!/bin/sh\ncat >> '${log}'\necho "pre-push: main is frozen today" >&2\nexit 1\n`);
    chmodSync(hook, 0o755);

    const scenario = f.scenario('job', {
      implement: [{ actions: [write('hello.txt', 'hello\n')] }],
      review: [verdict('ACCEPT', '')],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Greet' }] }],
    });
    const done = f.run(['job', 'do', '--title', 'greet'], scenario);
    expect(done.code, done.stderr).toBe(0);
    const id = jobIdFrom(done.stderr);
    // incrementum's own refs reached the remote without the hook.
    expect(git(bare, 'for-each-ref', '--format=%(refname)', 'refs/incrementum/')).toContain('/head');
    expect(existsSync(log)).toBe(false);
    expect(done.stderr).not.toContain('could not push');

    const remoteMain = git(bare, 'rev-parse', 'main');
    const mainHere = f.git('rev-parse', 'main').trim();
    const r = f.run(['job', 'land', id]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('main is frozen today');
    expect(readFileSync(log, 'utf8')).toContain('refs/heads/main');
    expect(git(bare, 'rev-parse', 'main')).toBe(remoteMain);
    expect(f.git('rev-parse', 'main').trim()).toBe(mainHere);
    expect(existsSync(join(f.repo, 'hello.txt'))).toBe(false);
    expect(f.git('status', '--porcelain').trim()).toBe('');
    expect((f.show(id) as unknown as { landed: unknown }).landed).toBeNull();

    // The hook agrees now: the same landing goes through, to the remote as well.
    writeFileSync(hook, `#!/bin/sh\ncat >> '${log}'\nexit 0\n`);
    const ok = f.run(['job', 'land', id]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(git(bare, 'rev-parse', 'main')).toBe(f.git('rev-parse', 'main').trim());
  }, 120_000);
});
