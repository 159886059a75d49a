// A long output cut for a person to read: its first lines and its last, with
// a line saying how many were left out between them. A failing command often
// says why first (npm's "The `npm ci` command can only install with an
// existing package-lock.json") and then prints pages of usage text: the tail
// alone loses the why, the head alone the summary.

/** The line standing for `n` lines left out. */
export const elision = (n: number): string => `… ${n} line${n === 1 ? '' : 's'} not shown …`;

/** The first `head` and the last `tail` of `lines`, and how many are between them. */
export function ends(
  lines: readonly string[],
  head: number,
  tail: number,
): { front: string[]; omitted: number; back: string[] } {
  // Leaving out one line would take as much room as showing it.
  if (lines.length <= head + tail + 1) return { front: [...lines], omitted: 0, back: [] };
  return { front: lines.slice(0, head), omitted: lines.length - head - tail, back: lines.slice(-tail) };
}

/** The two ends as one text, the elision line between them when lines were left out. */
export function joinEnds(front: string, omitted: number, back: string): string {
  return [front, ...(omitted > 0 ? [elision(omitted)] : []), back].filter((p) => p !== '').join('\n');
}
