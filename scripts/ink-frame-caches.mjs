// Runs in `prepare`, before the build (which bundles Ink): rewrites two of
// Ink's files in node_modules so that a frame reuses what the frame before it
// worked out, instead of starting from nothing. Ink draws every frame from
// scratch: each text written is tokenized into an object per character with
// its own style array, each screen cell starts as a new object, and each text
// node's width is measured again with Intl.Segmenter. On the board that was
// ~4.8 MB allocated per frame (with 10,000 todos, 75% of what a new todo
// allocated), and under --optimize-for-size (src/cli/dashboard/heap.ts) the
// young generation is small, so a frame's objects were promoted and a full GC
// came every few frames (bench/scale.bench.js, the backlog part).
//
// What is drawn is the same: each rewrite only keeps a pure function's
// result for the next frame (of a text, as Ink's own caches do within one, or
// of a row's very cells), or shares an object no one writes to. Each rewrite must match once; Ink changing these lines fails
// the install rather than quietly dropping them (as yoga-without-fetch does
// in rolldown.config.mjs). Run again, it finds its mark and does nothing.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MARK = '// incrementum: scripts/ink-frame-caches.mjs';

export const REWRITES = {
  'output.js': [
    // Ink's per-frame caches (styled characters, widths) look up the last
    // frame's too, and carry what they find over: a text drawn again is not
    // tokenized again. Two frames' entries are held at most.
    [
      'class OutputCaches {\n    widths = new Map();\n    blockWidths = new Map();\n    styledChars = new Map();',
      `${MARK}
// Each frame's cache map, and the one before it (dropped when the next is made).
const lastFrameMaps = {};
class FrameMap extends Map {
    previous;
    constructor(name) {
        super();
        const last = lastFrameMaps[name];
        if (last)
            last.previous = undefined;
        this.previous = last;
        lastFrameMaps[name] = this;
    }
    get(key) {
        let value = super.get(key);
        if (value === undefined && this.previous !== undefined) {
            value = Map.prototype.get.call(this.previous, key);
            if (value !== undefined)
                this.set(key, value);
        }
        return value;
    }
}
// The last frame's rows (its cells) and their text.
const lastFrameRows = { cells: [], texts: [] };
// Whether two rows hold the same cell objects (a hole reads as undefined in both).
const sameCells = (a, b) => {
    if (a.length !== b.length)
        return false;
    for (let x = 0; x < a.length; x++) {
        if (a[x] !== b[x])
            return false;
    }
    return true;
};
// A cell nothing was written to: cells are replaced, never changed, so all share one.
const blankCell0 = Object.freeze({ type: 'char', value: ' ', fullWidth: false, styles: Object.freeze([]) });
class OutputCaches {
    widths = new FrameMap('widths');
    blockWidths = new FrameMap('blockWidths');
    styledChars = new FrameMap('styledChars');
    lines = new FrameMap('lines');
    // A text's lines, each with the styles it inherits from those above
    // (applyWriteOperation's first step, which does not change the array).
    getLines(text) {
        let cached = this.lines.get(text);
        if (cached === undefined) {
            const characterLines = [[]];
            for (const character of this.getStyledChars(text)) {
                if (character.value === '\\n') {
                    characterLines.push([]);
                }
                else {
                    characterLines.at(-1).push(character);
                }
            }
            cached = characterLines.map(line => styledCharsToString(line));
            this.lines.set(text, cached);
        }
        return cached;
    }`,
    ],
    [
      `        // Preserve styles across explicit newlines before clipping individual rows.
        const characterLines = [[]];
        for (const character of this.caches.getStyledChars(text)) {
            if (character.value === '\\n') {
                characterLines.push([]);
            }
            else {
                characterLines.at(-1).push(character);
            }
        }
        let lines = characterLines.map(line => styledCharsToString(line));`,
      `        // Preserve styles across explicit newlines before clipping individual rows.
        let lines = this.caches.getLines(text);`,
    ],
    [
      `                row.push({
                    type: 'char',
                    value: ' ',
                    fullWidth: false,
                    styles: [],
                });`,
      '                row.push(blankCell0);',
    ],
    // A row whose cells are the very cells of the same row in the frame
    // before (cached characters, the shared blank) is that row's text again:
    // turning each row's cells into text (style diffs through Sets, string
    // concatenation a character at a time) was ~1.4 MB a frame.
    [
      `        const generatedOutput = output
            .map(line => {
            // See https://github.com/vadimdemedes/ink/pull/564#issuecomment-1637022742
            const lineWithoutEmptyItems = line.filter(item => item !== undefined);
            return styledCharsToString(lineWithoutEmptyItems).trimEnd();
        })
            .join('\\n');`,
      `        const lastRows = lastFrameRows.cells;
        const lastTexts = lastFrameRows.texts;
        const generatedOutput = output
            .map((line, y) => {
            const last = lastRows[y];
            if (last !== undefined && sameCells(last, line)) {
                return lastTexts[y];
            }
            // See https://github.com/vadimdemedes/ink/pull/564#issuecomment-1637022742
            const lineWithoutEmptyItems = line.filter(item => item !== undefined);
            return styledCharsToString(lineWithoutEmptyItems).trimEnd();
        });
        lastFrameRows.cells = output;
        lastFrameRows.texts = generatedOutput;
        const generatedText = generatedOutput.join('\\n');`,
    ],
    ['            output: generatedOutput,', '            output: generatedText,'],
  ],
  'render-node-to-output.js': [
    // A text node's width through measure-text's cache (Yoga's measure of
    // the same text fills it), not measured afresh on every frame.
    ["import widestLine from 'widest-line';", `${MARK}\nimport measureText from './measure-text.js';`],
    ['const currentWidth = widestLine(text);', 'const currentWidth = measureText(text).width;'],
  ],
};

/**
 * Applies REWRITES (or `rewrites`, marked with `mark`: scripts/ink-key-frames.mjs)
 * to the Ink in `inkDir` (its package folder); returns the files changed.
 */
export function patchInk(inkDir, rewrites = REWRITES, mark = MARK) {
  const changed = [];
  for (const [file, fileRewrites] of Object.entries(rewrites)) {
    const path = join(inkDir, 'build', file);
    let code = readFileSync(path, 'utf8');
    if (code.includes(mark)) continue;
    for (const [from, to] of fileRewrites) {
      if (code.split(from).length !== 2)
        throw new Error(`Ink changed: "${from.split('\n')[0]}" not found once in ${path}`);
      code = code.replace(from, () => to);
    }
    writeFileSync(path, code);
    changed.push(file);
  }
  return changed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    patchInk(join(ROOT, 'node_modules', 'ink'));
  } catch (err) {
    console.error(`ink-frame-caches: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
