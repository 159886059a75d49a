// ii run's terminal drawing: its lines scroll up as a log does, and under
// them a live area (a line per running job, then the total) is drawn again
// in place, moved up over and erased with escape codes before each write.
// Without a terminal there is no live area: the lines are all that is written.

/** Where the run writes: process.stderr, or anything that takes text alike. */
export interface LiveOut {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export class LiveArea {
  /** How many lines the live area took when last drawn (what the next write erases first). */
  private drawn = 0;

  /** `lines` is the live area's text at a width (the terminal's, less a column so no line wraps). */
  constructor(
    private readonly out: LiveOut,
    private readonly lines: (width: number) => string[],
  ) {}

  private get tty(): boolean {
    return this.out.isTTY === true;
  }

  /** A line of the log: written above the live area, which is drawn again under it. */
  say(text: string): void {
    this.clear();
    this.out.write(text + '\n');
    this.draw();
  }

  /** Draws the live area again in place (its elapsed times move on); nothing without a terminal. */
  draw(): void {
    if (!this.tty) return;
    this.clear();
    const lines = this.lines((this.out.columns || 80) - 1);
    this.out.write(lines.join('\n') + '\n');
    this.drawn = lines.length;
  }

  /** Erases the live area: up to its first line (CSI n F), then to the end of the screen (CSI J). */
  clear(): void {
    if (this.tty && this.drawn > 0) this.out.write(`\x1b[${this.drawn}F\x1b[J`);
    this.drawn = 0;
  }
}
