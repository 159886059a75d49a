// Getting a workspace ready to run the project's tests, before the first
// prompt: [workspace] setup (e.g. `npm ci`) runs there, each command in its
// own process group (test-runner.ts), unless the dependencies can be taken
// from the user's checkout (src/session/dependency-reuse.ts): mounted as an
// overlay in the job's sandbox, else cloned. A hash of the
// lockfiles is recorded per workspace, so setup runs again only when they
// changed (an agent that adds a dependency).
import type { TestResult } from '../model/job.js';
import type { GroupRecorder } from '../proc/recorded.js';
import type { Sandbox } from '../proc/sandbox/sandbox.js';
import { reuseDependencies, type ReuseMode } from '../session/dependency-reuse.js';
import { detectPackageManagers, lockfileHash } from '../session/lockfiles.js';
import { readSetupRecord, writeSetupRecord } from '../session/setup-record.js';
import { ends, joinEnds } from '../text/head-tail.js';
import { runTests } from './test-runner.js';

export interface SetupOptions {
  workspace: string;
  /** The user's checkout, where reusable dependencies come from. */
  checkout: string;
  commands: string[];
  reuse: ReuseMode;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** A command still running after this long has its group ended and fails. */
  timeoutMs?: number;
  /** Records each command's process group for the job (src/proc/recorded.ts). */
  recordGroup?: GroupRecorder;
  /** The job's sandbox, which every setup command runs in. */
  sandbox?: Sandbox | null;
  /** Each command's nice value raised by this much (ii run --land's setup of a tip, at [run] nice). */
  nice?: number;
  onStart?: (command: string) => void;
  onOutput?: (command: string, stream: 'stdout' | 'stderr', text: string) => void;
  onEnd?: (result: TestResult) => void;
  /** A command that was replaced by a clone of the checkout's dependencies. */
  onReuse?: (r: { command: string; dir: string; method: string; duration_ms: number }) => void;
  /** Why a command could not be replaced by a clone (said once, then it runs). */
  onNoReuse?: (command: string, reason: string) => void;
  /** Why reuse = "overlay" clones instead (no sandbox, or the mount failed), at each command it clones for. */
  onOverlayFallback?: (reason: string) => void;
}

export type SetupOutcome =
  /** No [workspace] setup, or the workspace's setup is current. */
  | { kind: 'skipped'; why: 'none configured' | 'up to date' }
  | { kind: 'done'; results: TestResult[]; reused: string[] }
  /** `tail`: the failing command's first and last lines (OutputTail.excerpt). */
  | { kind: 'failed'; results: TestResult[]; failed: TestResult; tail: string }
  | { kind: 'aborted' };

/**
 * What a failing command printed, for a failure reason: its last lines
 * (`lines`), or its first and last (`excerpt`). Only the two ends are kept, so
 * a command that prints megabytes costs no more than one that prints a line.
 */
export class OutputTail {
  private text = '';
  private head = '';
  private seen = 0;
  private newlines = 0;
  constructor(private readonly maxChars = 2000) {}
  add(chunk: string): void {
    if (this.head.length < this.maxChars) this.head += chunk.slice(0, this.maxChars - this.head.length);
    this.text = (this.text + chunk).slice(-this.maxChars * 2);
    this.seen += chunk.length;
    for (let i = chunk.indexOf('\n'); i !== -1; i = chunk.indexOf('\n', i + 1)) this.newlines++;
  }
  reset(): void {
    this.text = this.head = '';
    this.seen = this.newlines = 0;
  }
  lines(max = 20): string {
    const lines = this.text.trimEnd().split('\n').slice(-max).join('\n');
    return lines.length > this.maxChars ? '…' + lines.slice(-this.maxChars) : lines;
  }
  /**
   * The first `head` lines and the last `tail`, with a line saying how many
   * were left out between: a command often says why it failed first (npm's
   * "can only install with an existing package-lock.json") and then prints
   * pages of usage text, which a tail alone would show instead.
   */
  excerpt(head = 8, tail = 12): string {
    const kept = this.text.replace(/\s+$/, '');
    if (kept === '') return '';
    if (this.seen <= this.text.length) {
      const e = ends(kept.split('\n'), head, tail);
      if (e.omitted === 0) return bothEnds(kept, this.maxChars);
      return joinEnds(
        capped(e.front.join('\n'), this.maxChars, 'end'),
        e.omitted,
        capped(e.back.join('\n'), this.maxChars),
      );
    }
    // Only the two ends were kept: the tail's first line is cut, and the
    // lines between were counted, not held.
    const headLines = this.head.split('\n');
    let front = headLines.slice(0, head).join('\n');
    if (headLines.length <= head) front += '…'; // the head buffer ended inside its last line
    const tailLines = kept.split('\n');
    // Its first line is cut: dropped, unless the whole tail is inside one line.
    const back = (tailLines.length > 1 ? tailLines.slice(1) : ['…' + tailLines[0]]).slice(-tail);
    const trailing = (this.text.slice(kept.length).match(/\n/g) ?? []).length;
    const total = this.newlines - trailing + 1;
    const omitted = Math.max(0, total - Math.min(headLines.length, head) - back.length);
    return joinEnds(capped(front, this.maxChars, 'end'), omitted, capped(back.join('\n'), this.maxChars));
  }
}

/** `text` in at most `max` characters: its end kept (or its start, for `'end'`), marked where cut. */
function capped(text: string, max: number, cut: 'start' | 'end' = 'start'): string {
  if (text.length <= max) return text;
  return cut === 'start' ? '…' + text.slice(-max) : text.slice(0, max) + '…';
}

/** `text` in at most twice `max` characters: its first and last `max`, marked where cut. */
function bothEnds(text: string, max: number): string {
  return text.length <= 2 * max ? text : `${text.slice(0, max)}…${text.slice(-max)}`;
}

/** Runs the setup the workspace needs; never throws for a command's failure. */
export async function setupWorkspace(o: SetupOptions): Promise<SetupOutcome> {
  if (o.commands.length === 0) return { kind: 'skipped', why: 'none configured' };
  const hash = lockfileHash(o.workspace, o.commands);
  if (readSetupRecord(o.workspace)?.hash === hash) return { kind: 'skipped', why: 'up to date' };
  const managers = detectPackageManagers(o.workspace);
  const results: TestResult[] = [];
  const reused: string[] = [];
  const tail = new OutputTail();
  for (const command of o.commands) {
    if (o.signal?.aborted) return { kind: 'aborted' };
    // Only a command that is exactly a package manager's install may be
    // replaced: a custom one (`npm ci && npm run build`) does more than that.
    const pm = managers.find((m) => m.setup === command.trim());
    if (pm && o.reuse !== 'off') {
      const reuse = (mode: ReuseMode) =>
        reuseDependencies({
          checkout: o.checkout,
          workspace: o.workspace,
          pm,
          mode,
          ...(o.sandbox ? { overlay: (dir: string) => o.sandbox!.overlay(dir) } : {}),
          ...(o.signal ? { signal: o.signal } : {}),
        });
      let r = await reuse(o.reuse);
      if (!r.ok && r.overlay) {
        // The previous default, so a job without the sandbox is no slower than before.
        o.onOverlayFallback?.(`[workspace] reuse = "overlay" clones instead: ${r.reason}`);
        r = await reuse('clone');
      }
      if (r.ok) {
        o.onReuse?.({ command, dir: r.dir, method: r.method, duration_ms: r.duration_ms });
        reused.push(command);
        continue;
      }
      o.onNoReuse?.(command, r.reason);
    }
    tail.reset();
    const run = await runTests({
      commands: [command],
      cwd: o.workspace,
      ...(o.env ? { env: o.env } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
      ...(o.recordGroup ? { recordGroup: o.recordGroup } : {}),
      ...(o.sandbox ? { sandbox: o.sandbox } : {}),
      ...(o.nice ? { nice: o.nice } : {}),
      ...(o.onStart ? { onStart: o.onStart } : {}),
      onOutput: (c, stream, text) => {
        tail.add(text);
        o.onOutput?.(c, stream, text);
      },
      ...(o.onEnd ? { onEnd: o.onEnd } : {}),
    });
    if (run.aborted) return { kind: 'aborted' };
    results.push(...run.results);
    const last = run.results.at(-1)!;
    if (last.exit_code !== 0) return { kind: 'failed', results, failed: last, tail: tail.excerpt() };
  }
  // Hashed before the commands ran: a setup that rewrites the lockfile (a
  // non-frozen install) is then seen as stale next time, and runs again.
  writeSetupRecord(o.workspace, hash);
  return { kind: 'done', results, reused };
}
