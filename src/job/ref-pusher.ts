// A job's refs pushed to the shared remote as they are made ([remote] push):
// in the background, so the next prompt never waits on the network, one push
// at a time (a later push must not be overtaken by an earlier one, which
// would put an old head back), and the pushes that come in while one runs
// folded into the next (each pushes every change of the job, so the last
// one carries all). A failed push is a warning on the job and is tried again
// with the next iteration; it never fails the job. The runner waits for the
// last one (settle) before it records the job's end, so a job seen finished
// from another machine has its commits on the remote.
import type { RemoteSpec } from '../model/remote.js';
import type { RemoteVcs } from '../vcs/remote-vcs.js';

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
  ) {}

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
   * are left if that fails too.
   */
  async settle(): Promise<void> {
    while (this.running) await this.running;
    if (this.failed === null || this.changes.size === 0) return;
    await this.pushOnce();
    if (this.failed !== null)
      this.say(
        'warning',
        `the job's commits are on this machine only: push them with git push ${this.remote.name} ${[...this.changes].map((id) => `'+refs/incrementum/changes/${id}/*:refs/incrementum/changes/${id}/*'`).join(' ')}`,
      );
  }

  private async drain(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.pushOnce();
      } while (this.again);
    } finally {
      this.running = null;
    }
  }

  private async pushOnce(): Promise<void> {
    let detail: string | null;
    try {
      const r = await this.vcs.pushChangeRefs(this.root, this.remote, [...this.changes]);
      detail = r.ok ? null : r.detail;
    } catch (err) {
      detail = (err as Error).message;
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
