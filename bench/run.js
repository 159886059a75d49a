#!/usr/bin/env node
// `npm run bench`: runs every bench/*.bench.js and prints one table. Each
// benchmark exports `run()` returning rows {name, value, unit, floor?, ratio?, goal}.
// Timings are noisy on shared machines, so each figure that has a floor (the
// cheapest comparable thing, measured in the same run) is shown as a ratio to it.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const rows = [];
let failed = 0;
for (const f of files) {
  process.stderr.write(`bench: ${f} …\n`);
  try {
    const mod = await import(pathToFileURL(join(here, f)).href);
    for (const r of await mod.run()) rows.push({ bench: f.replace(/\.bench\.js$/, ''), ...r });
  } catch (err) {
    failed++;
    rows.push({
      bench: f.replace(/\.bench\.js$/, ''),
      name: 'FAILED',
      value: String(err?.message ?? err),
      unit: '',
      goal: '',
    });
  }
}

const fmt = (v) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : (v ?? ''));
const header = ['bench', 'figure', 'value', 'unit', 'floor', 'ratio', 'goal'];
const table = rows.map((r) => [
  r.bench,
  r.name,
  fmt(r.value),
  r.unit ?? '',
  fmt(r.floor),
  r.ratio == null ? '' : `${fmt(r.ratio)}×`,
  r.goal ?? '',
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => String(row[i]).length)));
const line = (cells) =>
  cells
    .map((c, i) => String(c).padEnd(widths[i]))
    .join('  ')
    .trimEnd();
process.stdout.write(line(header) + '\n' + line(widths.map((w) => '-'.repeat(w))) + '\n');
for (const row of table) process.stdout.write(line(row) + '\n');
process.exitCode = failed ? 1 : 0;
