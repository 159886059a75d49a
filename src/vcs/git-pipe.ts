// A long-lived git process answering requests on its stdin, one at a time
// (cat-file --batch-command, update-ref --stdin, diff-tree --stdin): a job's
// iteration reads HEAD, writes its refs and lists its files through the same
// three processes all job long, where each used to start a git of its own
// (git's start-up is most of what an iteration costs the runner).
//
// Lifetime: started on first use, started again when it has died (a git
// killed, or one that exits on a refused request: update-ref does), ended by
// close(). It never keeps Node running while idle (unref'd), and it reads its
// requests from a pipe this process holds: when this process ends, however
// it ends, git reads end-of-file and exits, so it never outlives the runner.
//
// Security: the link check (`before`) runs before every request, as before
// every spawned git, so a workspace whose .git was repointed gets no answer
// from a process opened before; git is given the git dir that check found
// (--git-dir) and runs in `/` (none of these reads a work tree): no folder
// of the job's is its cwd, so the job's sweep of what works in its
// workspace never takes it for the agent's, nor does it hold a folder.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { decodeBytes } from '../text/bytes.js';
import { GitError, GoneCwdError, gitEnv, spawnError, type GitOptions } from './git-run.js';

/** How many bytes at the start of `out` are one whole reply; -1 while it is not all there. */
export type ReplyEnd = (out: Buffer) => number;

interface Pending {
  child: ChildProcessWithoutNullStreams;
  end: ReplyEnd;
  resolve: (reply: Buffer) => void;
  reject: (err: Error) => void;
}

type Refable = { ref(): void; unref(): void };

export class GitPipe {
  private child: ChildProcessWithoutNullStreams | null = null;
  /** The git dir the running process was given (null: it found its own). */
  private gitDir: string | null = null;
  private out: Buffer = Buffer.alloc(0);
  private stderr = '';
  private pending: Pending | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly cwd: string,
    private readonly args: string[],
    private readonly before?: GitOptions['before'],
  ) {}

  /** Writes `input` and resolves with the reply `end` finds; GitError when git exits first. */
  ask(input: string | Buffer, end: ReplyEnd): Promise<Buffer> {
    const reply = this.queue.then(() => this.send(input, end));
    this.queue = reply.catch(() => {});
    return reply;
  }

  /** Ends the process (git exits on end-of-file); the next request starts another. */
  close(): void {
    const child = this.child;
    if (!child) return;
    this.child = null;
    child.stdin.end();
    if (!this.pending) child.kill('SIGTERM');
  }

  private send(input: string | Buffer, end: ReplyEnd): Promise<Buffer> {
    let pin;
    try {
      pin = this.before?.() ?? null;
    } catch (err) {
      if (!existsSync(this.cwd)) throw new GoneCwdError(this.cwd, this.args);
      throw err;
    }
    if (this.child && (pin?.gitDir ?? null) !== this.gitDir) this.close();
    const child = this.child ?? this.start(pin?.gitDir ?? null);
    return new Promise<Buffer>((resolve, reject) => {
      this.pending = { child, end, resolve, reject };
      this.hold(child, true);
      child.stdin.write(input);
    });
  }

  private start(gitDir: string | null): ChildProcessWithoutNullStreams {
    const where = gitDir ? [`--git-dir=${gitDir}`] : [];
    const child = spawn('git', ['-c', 'core.quotepath=off', '--no-pager', ...where, ...this.args], {
      cwd: gitDir ? '/' : this.cwd,
      env: gitEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.gitDir = gitDir;
    this.out = Buffer.alloc(0);
    this.stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      const p = this.pending;
      if (p?.child !== child) return;
      this.out = this.out.length ? Buffer.concat([this.out, d]) : d;
      const n = p.end(this.out);
      if (n < 0) return;
      const reply = this.out.subarray(0, n);
      this.out = this.out.subarray(n);
      this.pending = null;
      this.hold(child, false);
      p.resolve(reply);
    });
    child.stderr.on('data', (d: Buffer) => {
      if (this.stderr.length < 64 * 1024) this.stderr += decodeBytes(d);
    });
    child.stdin.on('error', () => {});
    child.on('error', (err) => this.fail(child, spawnError(err, this.cwd, this.args)));
    child.on('close', (code) =>
      this.fail(
        child,
        new GitError(this.args, this.cwd, {
          code: code ?? -1,
          stdout: decodeBytes(this.out),
          stderr: this.stderr || `git ${this.args[0]} exited`,
        }),
      ),
    );
    this.hold(child, false);
    return child;
  }

  /** The process is gone: so is its request, and the next one starts another. */
  private fail(child: ChildProcessWithoutNullStreams, err: Error): void {
    if (this.child === child) this.child = null;
    const p = this.pending;
    if (p?.child !== child) return;
    this.pending = null;
    p.reject(err);
  }

  /** Keeps Node running while a reply is awaited, and only then. */
  private hold(child: ChildProcessWithoutNullStreams, on: boolean): void {
    for (const h of [child, child.stdin, child.stdout, child.stderr] as unknown as Refable[])
      if (on) h.ref();
      else h.unref();
  }
}
