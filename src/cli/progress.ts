// Progress for long CLI work (ii job do, ii demo without a terminal). On a
// terminal one status line ("● reviewing  1m12s") is rewritten in place every
// second below the permanent lines, and each stage also prints a permanent
// line when it starts, so the scrollback keeps the job's path (implementing,
// testing, reviewing, …) as a log would; elsewhere every line is plain and
// printed once, so logs and CI output stay readable.

export interface Progress {
  /** A new stage: a permanent line, and on a terminal the live line with its elapsed time. */
  stage(name: string, detail?: string): void;
  /** A permanent line. */
  line(text: string): void;
  /** Clears the live line; call before exiting. */
  done(): void;
}

/** "9s", "1m12s", "2h03m". */
export function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export function createProgress(
  stream: NodeJS.WriteStream = process.stderr,
  opts: { now?: () => number; tty?: boolean } = {},
): Progress {
  const now = opts.now ?? Date.now;
  const tty = opts.tty ?? Boolean(stream.isTTY);
  let current: { name: string; detail: string; since: number } | null = null;
  let timer: NodeJS.Timeout | null = null;

  const live = () =>
    current
      ? `● ${current.name}${current.detail ? ` ${current.detail}` : ''}  ${elapsed(now() - current.since)}`
      : '';
  const clear = () => stream.write('\r\x1b[2K');
  const draw = () => {
    if (!tty || !current) return;
    const width = stream.columns || 80;
    clear();
    stream.write(live().slice(0, width - 1));
  };

  return {
    stage(name, detail = '') {
      if (tty && current) clear();
      current = { name, detail, since: now() };
      stream.write(`${name}${detail ? ` ${detail}` : ''}\n`);
      if (!tty) return;
      draw();
      // unref: the ticker never keeps the process alive on its own.
      timer ??= setInterval(draw, 1000).unref();
    },
    line(text) {
      if (tty && current) clear();
      stream.write(`${text}\n`);
      draw();
    },
    done() {
      if (timer) clearInterval(timer);
      timer = null;
      if (tty && current) clear();
      current = null;
    },
  };
}
