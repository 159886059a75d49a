// A real terminal for end-to-end tests: a private tmux server (its own
// socket), a pane of a fixed size, screen captures polled until they show
// what is expected.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './tmp.js';

export const hasTmux = spawnSync('tmux', ['-V']).status === 0;

export class Tmux {
  readonly socket: string;
  private readonly conf: string;
  constructor(dir: string) {
    this.socket = `ii-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    this.conf = join(dir, 'tmux.conf');
    // remain-on-exit keeps the pane after the program ends, to read its exit status and screen.
    writeFileSync(this.conf, 'set -g remain-on-exit on\nset -g status off\n');
  }

  tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, '-f', this.conf, ...args], { encoding: 'utf8' });
  }

  private exitFile: string | null = null;

  /**
   * Starts argv in a new session of the given size, in cwd, with extra env.
   * argv runs under a small sh that writes its exit status to a file once it
   * ends: tmux's own #{pane_dead_status} proved unreliable here (the pane is
   * marked dead while the process stays an unreaped zombie). argv reaches sh
   * as positional parameters, never as shell text.
   */
  start(
    argv: string[],
    o: { cwd: string; env: Record<string, string>; columns?: number; rows?: number },
  ): void {
    const env = Object.entries(o.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    this.exitFile = `${this.conf}.exit`;
    this.tmux(
      'new-session',
      '-d',
      '-s',
      'main',
      '-x',
      String(o.columns ?? 100),
      '-y',
      String(o.rows ?? 30),
      '-c',
      o.cwd,
      ...env,
      'sh',
      '-c',
      // The trap keeps sh alive through a Ctrl-C sent to the terminal's
      // foreground group, to record the program's status; the program itself
      // gets SIGINT as usual (a caught signal is reset to default on exec).
      'trap : INT; "$@"; echo "$?" > "$0.tmp" && mv "$0.tmp" "$0"',
      this.exitFile,
      ...argv,
    );
  }

  /** The program's exit status, once it has ended (128+N when a signal N ended it). */
  async exitStatus(ms = 20_000): Promise<number> {
    const file = this.exitFile;
    if (!file) throw new Error('nothing started');
    // The text, not the number: waitFor treats a 0 as "not yet".
    const text = await waitFor(
      () => (existsSync(file) ? readFileSync(file, 'utf8').trim() : null),
      'the program in tmux to exit',
      ms,
      50,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nlast screen:\n${this.capture()}`);
    });
    return Number(text);
  }

  /** Records everything the program writes from now on into `file` (to check the escape sequences it leaves with). */
  record(file: string): void {
    // pipe-pane takes a shell command; the path is a temp path of ours, quoted.
    if (file.includes("'")) throw new Error(`unexpected quote in ${file}`);
    this.tmux('pipe-pane', '-o', '-t', 'main', `cat > '${file}'`);
  }

  capture(): string {
    return this.tmux('capture-pane', '-p', '-t', 'main');
  }

  /** The screen with its colours and attributes, as escape sequences (capture-pane -e). */
  captureStyled(): string {
    return this.tmux('capture-pane', '-p', '-e', '-t', 'main');
  }

  send(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'main', ...keys);
  }

  /** A pane variable (#{alternate_on}, #{cursor_flag}, #{pane_dead}, #{pane_dead_status}). */
  get(format: string): string {
    return this.tmux('display-message', '-p', '-t', 'main', format).trim();
  }

  async screenWith(...texts: string[]): Promise<string> {
    let last = '';
    return waitFor(
      () => {
        last = this.capture();
        return texts.every((t) => last.includes(t)) ? last : null;
      },
      `the terminal to show ${texts.map((t) => JSON.stringify(t)).join(', ')}; screen:\n${last}`,
      20_000,
      50,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nlast screen:\n${this.capture()}`);
    });
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }
}
