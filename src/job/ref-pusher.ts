// A job's refs pushed to the shared remote as they are made ([remote] push):
// in the background, so the next prompt never waits on the network, one push
// at a time (a later push must not be overtaken by an earlier one, which
// would put an old head back), and the pushes that come in while one runs
// folded into the next (each pushes every change of the job, so the last
// one carries all). A failed push is a warning on the job and is tried again
// with the next iteration; it never fails the job. The runner waits for the
// last one (settle) before it records the job's end, so a job seen finished
// from another machine has its commits on the remote. A cancelled job does
// not wait on the remote: its push in flight is ended at once (a hanging
// remote would hold the cancel for the whole timeout, twice with the retry),
// nothing is tried again, and the warning says how to push by hand.
import type { RemoteSpec } from '../model/remote.js';
import type { PushControl, RemoteVcs } from '../vcs/remote-vcs.js';

export class RefPusher {
  private readonly changes = new Set<string>();
  private running: Promise<void> | null = null;
  /** A push was asked for while one ran: one more follows it. */
  private again = false;
  /** The last push's failure, until one succeeds. */
  private failed: string | null = null;

  constructor(
    private readonly vcs: Pick<RemoteVcs, 'pushChangeRefs'>,
    private readonly root: string,
    private readonly remote: RemoteSpec,
    /** A job event: a failure is a warning, a push that works again after one an info. */
    private readonly say: (type: 'warning' | 'info', message: string) => void,
    /** The job's cancel (its signal ends the push in flight) and the recorder of the push's process group. */
    private readonly control: PushControl = {},
  ) {}

  private get cancelled(): boolean {
    return this.control.signal?.aborted === true;
  }

  /** Pushes the job's refs, `changeId`'s among them, soon; returns at once. */
  push(changeId: string): void {
    this.changes.add(changeId);
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain();
  }

  /**
   * Waits for the pushes under way; when the last one failed, tries once
   * more (the job's end is the last chance), and says where the commits
   * are left if that fails too. After a cancel, the push under way has been
   * ended and nothing is tried again: it says so at once.
   */
  async settle(): Promise<void> {
    while (this.running) await this.running;
    if (this.failed === null || this.changes.size === 0) return;
    if (!this.cancelled) await this.pushOnce();
    if (this.failed === null) return;
    const refs = [...this.changes].map((id) => `refs/incrementum/changes/${id}/*`);
    const by = `git push ${this.remote.name} ${refs.map((r) => `'+${r}:${r}'`).join(' ')}`;
    this.say(
      'warning',
      this.cancelled
        ? `the job was cancelled before its refs reached the remote ${this.remote.name}: ${refs.join(', ')} were not pushed; push them by hand with ${by}`
        : `the job's commits are on this machine only: push them with ${by}`,
    );
  }

  private async drain(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.pushOnce();
      } while (this.again && !this.cancelled);
    } finally {
      this.running = null;
    }
  }

  private async pushOnce(): Promise<void> {
    if (this.cancelled) {
      // Not started after a cancel: settle says what was left unpushed.
      this.failed ??= 'cancelled';
      return;
    }
    let detail: string | null;
    try {
      const r = await this.vcs.pushChangeRefs(this.root, this.remote, [...this.changes], this.control);
      detail = r.ok ? null : r.detail;
    } catch (err) {
      detail = (err as Error).message;
    }
    // Ended by the cancel: settle says what was left unpushed, not that it is tried again.
    if (detail !== null && this.cancelled) {
      this.failed = detail;
      return;
    }
    if (detail !== null)
      this.say(
        'warning',
        `could not push the job's refs to the remote ${this.remote.name} (tried again at the next iteration): ${detail}`,
      );
    else if (this.failed !== null)
      this.say('info', `pushed the job's refs to the remote ${this.remote.name} again`);
    this.failed = detail;
  }
}
