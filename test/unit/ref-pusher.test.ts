// When job refs travel through the remote (src/model/remote.ts), and how the
// runner's pushes go (src/job/ref-pusher.ts): in the background, one at a
// time, folded while one runs, never failing the job, awaited at its end.
// The pusher's git is a stand-in whose pushes the test finishes by hand: what
// is checked is their order and number, which a real remote cannot hold still.
import { describe, expect, it } from 'vitest';
import { RefPusher } from '../../src/job/ref-pusher.js';
import { Config } from '../../src/model/config.js';
import { fetchRemote, jobRefsRemote, landingRemote } from '../../src/model/remote.js';
import type { RemoteOutcome } from '../../src/vcs/remote-vcs.js';

const config = (toml: Record<string, unknown> = {}) => Config.parse(toml);

describe('which remote, when', () => {
  const has = () => true;
  const none = () => false;
  it('off with the local store unless asked for; on with PostgreSQL unless turned off; landing follows unless set', () => {
    expect(jobRefsRemote(config(), false, has)).toBeNull();
    expect(landingRemote(config(), false, has)).toBeNull();
    expect(jobRefsRemote(config(), true, has)).toEqual({ name: 'origin', timeoutMs: 60_000 });
    expect(landingRemote(config(), true, has)).toEqual({ name: 'origin', timeoutMs: 60_000 });
    const on = config({ remote: { push: true, name: 'shared', 'timeout-seconds': 5 } });
    expect(jobRefsRemote(on, false, has)).toEqual({ name: 'shared', timeoutMs: 5000 });
    expect(jobRefsRemote(config({ remote: { push: false } }), true, has)).toBeNull();
    expect(landingRemote(config({ remote: { push: true }, land: { push: false } }), true, has)).toBeNull();
    expect(landingRemote(config({ land: { push: true } }), false, has)).not.toBeNull();
    // A job another host ran is fetched for whatever this one pushes, unless sharing is turned off here.
    expect(fetchRemote(config(), false, 'box-b', 'box-a', has)).not.toBeNull();
    expect(fetchRemote(config(), false, 'box-a', 'box-a', has)).toBeNull();
    expect(fetchRemote(config({ remote: { push: false } }), true, 'box-b', 'box-a', has)).toBeNull();
  });

  it('the PostgreSQL default is on only where the repository has the remote; an explicit push = true without it is refused', () => {
    // A repository with neither remote nor project (the README's "its path") lands and runs as on SQLite.
    expect(jobRefsRemote(config(), true, none)).toBeNull();
    expect(landingRemote(config(), true, none)).toBeNull();
    const asked: string[] = [];
    expect(
      jobRefsRemote(config({ remote: { name: 'shared' } }), true, (n) => (asked.push(n), false)),
    ).toBeNull();
    expect(asked).toEqual(['shared']);
    expect(() => jobRefsRemote(config({ remote: { push: true } }), false, none)).toThrow(
      /\[remote\] push = true, but this repository has no remote named origin.*git remote add origin/,
    );
    expect(() => landingRemote(config({ land: { push: true } }), true, none)).toThrow(
      /\[land\] push = true, but this repository has no remote named origin/,
    );
    // Turned off, nothing is asked of the repository.
    expect(landingRemote(config({ land: { push: false } }), true, none)).toBeNull();
  });
});

/** A stand-in git whose pushes wait until the test ends them (or the cancel does, as git-run.ts's signal would). */
function heldPushes() {
  const calls: { ids: string[]; end: (r: RemoteOutcome) => void }[] = [];
  return {
    calls,
    vcs: {
      pushChangeRefs: (
        _root: string,
        _remote: unknown,
        ids: readonly string[],
        control?: { signal?: AbortSignal },
      ) =>
        new Promise<RemoteOutcome>((end) => {
          calls.push({ ids: [...ids], end });
          control?.signal?.addEventListener('abort', () => end({ ok: false, detail: 'cancelled' }));
        }),
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('RefPusher', () => {
  it('returns at once, pushes one at a time, folds what comes in meanwhile into one more push of every change', async () => {
    const { calls, vcs } = heldPushes();
    const said: string[] = [];
    const p = new RefPusher(vcs, '/repo', { name: 'origin', timeoutMs: 1000 }, (t, m) =>
      said.push(`${t}: ${m}`),
    );
    p.push('I1');
    expect(calls).toHaveLength(1);
    p.push('I1');
    p.push('I2');
    p.push('I2');
    await tick();
    expect(calls).toHaveLength(1); // the first is still running: nothing overtakes it
    calls[0]!.end({ ok: true });
    await tick();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.ids).toEqual(['I1', 'I2']);
    let settled = false;
    const done = p.settle().then(() => (settled = true));
    await tick();
    expect(settled).toBe(false); // the end waits for the push under way
    calls[1]!.end({ ok: true });
    await done;
    expect(calls).toHaveLength(2);
    expect(said).toEqual([]);
  });

  it('a failed push is a warning and is tried again with the next one; the end tries once more and says how to push by hand', async () => {
    const { calls, vcs } = heldPushes();
    const said: string[] = [];
    const p = new RefPusher(vcs, '/repo', { name: 'origin', timeoutMs: 1000 }, (t, m) =>
      said.push(`${t}: ${m}`),
    );
    p.push('I1');
    calls[0]!.end({ ok: false, detail: 'fatal: unreachable' });
    await tick();
    expect(said).toEqual([
      "warning: could not push the job's refs to the remote origin (tried again at the next iteration): fatal: unreachable",
    ]);
    p.push('I1');
    calls[1]!.end({ ok: true });
    await tick();
    expect(said.at(-1)).toBe("info: pushed the job's refs to the remote origin again");
    p.push('I2');
    calls[2]!.end({ ok: false, detail: 'fatal: unreachable' });
    const done = p.settle();
    await tick();
    expect(calls).toHaveLength(4); // the last chance
    expect(calls[3]!.ids).toEqual(['I1', 'I2']);
    calls[3]!.end({ ok: false, detail: 'fatal: still unreachable' });
    await done;
    expect(said.at(-1)).toBe(
      "warning: the job's commits are on this machine only: push them with git push origin '+refs/incrementum/changes/I1/*:refs/incrementum/changes/I1/*' '+refs/incrementum/changes/I2/*:refs/incrementum/changes/I2/*'",
    );
  });

  it('after a cancel: the push under way is ended, nothing is tried again, and the warning names the refs left unpushed and the command', async () => {
    const { calls, vcs } = heldPushes();
    const said: string[] = [];
    const cancel = new AbortController();
    const p = new RefPusher(
      vcs,
      '/repo',
      { name: 'origin', timeoutMs: 60_000 },
      (t, m) => said.push(`${t}: ${m}`),
      { signal: cancel.signal },
    );
    p.push('I1');
    p.push('I2'); // folded into one more push, which the cancel must not start
    cancel.abort();
    await p.settle();
    expect(calls).toHaveLength(1);
    expect(said).toEqual([
      "warning: the job was cancelled before its refs reached the remote origin: refs/incrementum/changes/I1/*, refs/incrementum/changes/I2/* were not pushed; push them by hand with git push origin '+refs/incrementum/changes/I1/*:refs/incrementum/changes/I1/*' '+refs/incrementum/changes/I2/*:refs/incrementum/changes/I2/*'",
    ]);
  });
});
