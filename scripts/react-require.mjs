// Rewrites the bundle's imports of React, its reconciler and scheduler (CommonJS
// packages kept external: rolldown.config.mjs) into require() calls. Imported
// from an ES module, a CommonJS module is first scanned for its export names,
// and so is every module its `module.exports = require(…)` names: both the
// production and the development build of each, though only one runs. The
// development reconciler alone is 795 KB; scanning them held ~2.2 MB more of
// the dashboard's RSS than requiring the same packages (bench/dashboard.bench.js).
// Each import is one line in the bundle and stays one line, so the source
// maps still hold.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const IMPORT =
  /^import (?:([A-Za-z_$][\w$]*)(?:, )?)?(\{[^}]*\})? from "((?:react|react-reconciler|scheduler)(?:\/[\w./-]+)?)";$/gm;
const REQUIRE =
  'const __iiRequire = globalThis.process.getBuiltinModule("node:module").createRequire(import.meta.url);';

/** `{ a, b as c }` as a destructuring pattern: `{ a, b: c }`. */
const pattern = (named) => named.replace(/([\w$]+) as ([\w$]+)/g, '$1: $2');

export function requireReact(dir) {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.js')) continue;
    const file = join(dir, name);
    const text = readFileSync(file, 'utf8');
    let n = 0;
    const out = text.replace(IMPORT, (_m, def, named, id) => {
      const lead = n++ === 0 ? `${REQUIRE} ` : '';
      const mod = `__iiRequire(${JSON.stringify(id)})`;
      if (def && named) return `${lead}const ${def} = ${mod}; const ${pattern(named)} = ${def};`;
      if (def) return `${lead}const ${def} = ${mod};`;
      return `${lead}const ${pattern(named)} = ${mod};`;
    });
    if (n) writeFileSync(file, out);
  }
}
