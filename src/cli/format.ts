import { stripVTControlCharacters } from 'node:util';
import { terminalJson } from '../text/json.js';
// Plain-text output helpers: colour only on a terminal and never with NO_COLOR.

export function colorEnabled(stream: NodeJS.WriteStream = process.stdout, env = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

const wrap = (on: boolean, open: number, close: number) => (s: string) =>
  on ? `\x1b[${open}m${s}\x1b[${close}m` : s;

export function style(on = colorEnabled()): Style {
  return {
    bold: wrap(on, 1, 22),
    dim: wrap(on, 2, 22),
    red: wrap(on, 31, 39),
    green: wrap(on, 32, 39),
    yellow: wrap(on, 33, 39),
    cyan: wrap(on, 36, 39),
  };
}

/** Visible width of a string that may hold ANSI escapes. */
export const visibleWidth = (s: string): number => stripVTControlCharacters(s).length;

/** Renders rows as left-aligned columns; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => visibleWidth(r[i] ?? ''))));
  return all
    .map((r) =>
      r
        .map((cell, i) =>
          i === r.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - visibleWidth(cell)),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** "3m", "2h", "5d": how long ago an ISO time was. */
export function age(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(s)) return 'N/A';
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/**
 * JSON for people on a terminal (indented), compact for programs: piped
 * output of a big list is half the bytes and half the time to write. No raw
 * control character is written (src/text/json.ts).
 */
export function printJson(value: unknown, stream: NodeJS.WriteStream = process.stdout): void {
  stream.write(terminalJson(value, stream.isTTY ? 2 : undefined) + '\n');
}

/** A byte count for people: 0 B, 812 KB, 1.4 MB, 26.0 GB (powers of 1024, as du -h). */
export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}
