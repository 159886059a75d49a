// Word-wraps shown text to a width, for views where the words are the point
// (review comments, reasons): truncating them hides what a person came to read.

/** One line as lines of at most `width` characters, breaking at spaces, keeping its indent on each. */
export function wrapLine(line: string, width: number): string[] {
  if (width <= 0 || line.length <= width) return [line];
  const indent = /^\s*/.exec(line)![0].slice(0, Math.max(0, Math.floor(width / 2)));
  const room = width - indent.length;
  const out: string[] = [];
  let rest = line.slice(indent.length);
  while (rest.length > room) {
    let cut = rest.lastIndexOf(' ', room);
    if (cut <= 0) cut = room;
    out.push(indent + rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest || out.length === 0) out.push(indent + rest);
  return out;
}

/** Every line wrapped. */
export const wrapLines = (lines: string[], width: number): string[] =>
  lines.flatMap((l) => wrapLine(l, width));

/**
 * A one-line text in at most `lines` lines of `width`, broken at spaces; what
 * does not fit ends the last line with an ellipsis.
 */
export function wrapClamp(text: string, width: number, lines: number): string[] {
  const all = wrapLine(text, width);
  if (all.length <= lines) return all;
  const last = all.slice(lines - 1).join(' ');
  return [
    ...all.slice(0, lines - 1),
    last.length > width ? `${last.slice(0, Math.max(0, width - 1))}…` : last,
  ];
}
