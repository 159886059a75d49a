// Rewrites the bundle's imports of Node's built-in modules into
// process.getBuiltinModule() calls. Loaded through `import`, a built-in gets
// an ES module facade whose exports are read once each as it is made, which
// runs every lazy getter the module has: node:fs loads fs/promises, its
// streams and watchers, node:crypto every one of its parts (webcrypto,
// keygen, x509, …). getBuiltinModule hands back the module as it is. For
// `ii job list` that was 6 ms of a 40 ms start (a script importing the same
// eight built-ins both ways, median of 25). Each import is one line in the
// bundle and stays one line, so the source maps still hold.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const IMPORT =
  /^import (?:(\{[^}]*\})|([A-Za-z_$][\w$]*)) from "(node:[\w/]+)";$|^import "(node:[\w/]+)";$/gm;
const get = (id) => `globalThis.process.getBuiltinModule(${JSON.stringify(id)})`;

/**
 * Functions of the built-ins whose loading costs most (child_process brings
 * net and dgram, crypto all its parts: 3 and 5 ms) and that a command may
 * well not call: each becomes a function that gets the module when first
 * called, so ii job list, which spawns nothing and makes no id, loads neither.
 */
const LAZY = {
  'node:child_process': new Set([
    'spawn',
    'spawnSync',
    'execFile',
    'execFileSync',
    'exec',
    'execSync',
    'fork',
  ]),
  'node:crypto': new Set([
    'createHash',
    'createHmac',
    'randomBytes',
    'randomUUID',
    'randomInt',
    'timingSafeEqual',
  ]),
};

/** The `import` line as a declaration: `{ a as b }` becomes `{ a: b }`, a default import the module itself. */
function rewrite(line, named, name, id, bare) {
  if (bare) return `${get(bare)};`;
  if (name) return `const ${name} = ${get(id)};`;
  const pairs = named
    .slice(1, -1)
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => p.split(/\s+as\s+/));
  if (LAZY[id] && pairs.every(([fn]) => LAZY[id].has(fn)))
    return `const ${pairs.map(([fn, as = fn]) => `${as} = (...a) => ${get(id)}.${fn}(...a)`).join(', ')};`;
  return `const { ${pairs.map(([fn, as]) => (as ? `${fn}: ${as}` : fn)).join(', ')} } = ${get(id)};`;
}

/** Rewrites every .js file of `dir`; returns how many imports it rewrote. */
export function builtinsWithoutFacades(dir) {
  let n = 0;
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.js')) continue;
    const path = join(dir, f);
    const code = readFileSync(path, 'utf8');
    const out = code.replace(IMPORT, (...m) => {
      n++;
      return rewrite(...m);
    });
    if (out !== code) writeFileSync(path, out);
  }
  return n;
}
