// The layers of src/ and components/, read from the source tree: every import
// (static, type-only, re-export and import()) points down the table below or
// stays on its own floor, and no chain of imports comes back to where it
// started. A new top-level folder has to be placed in the table, which is the
// moment to decide what it may use. CONTRIBUTING.md describes the same table.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** Lowest first: a file may import from its own layer and the ones before it. */
const LAYERS: { name: string; holds: string[] }[] = [
  // Plain data and text: the job model, config schema, redaction, errors.
  { name: 'model', holds: ['src/model/', 'src/text/', 'src/errors.ts', 'src/package-root.ts'] },
  // The adapters: the SQLite store, git, process groups.
  { name: 'state/vcs', holds: ['src/state/', 'src/vcs/', 'src/proc/'] },
  // What a job is made of: agents, workspaces, iteration history, the journal,
  // the todo template and the config template.
  {
    name: 'agent/session/history/journal',
    holds: ['src/agent/', 'src/session/', 'src/history/', 'src/journal/', 'src/todo/', 'src/init/'],
  },
  // The read side of a job the CLI and the board share: its events, transcripts
  // and test runs as lines.
  { name: 'job-log', holds: ['src/job-log/'] },
  // The runner and its wiring.
  { name: 'job', holds: ['src/job/'] },
  // What drives jobs from above: landing (its plan, the flow, the merge queue)
  // and the backlog's scheduler (ii run), which starts job runners.
  { name: 'land/backlog', holds: ['src/land/', 'src/backlog/'] },
  // What looks at jobs: the dashboard's view-model and I/O, and the doctor's checks.
  { name: 'dashboard', holds: ['src/dashboard/', 'src/doctor/'] },
  // The dashboard's React views.
  { name: 'views', holds: ['components/'] },
  // The commands and their start-up code (the demo too: it runs `ii` itself).
  { name: 'cli', holds: ['src/cli/'] },
];

/** Where a GitVcs may be made: src/vcs itself and the composition roots. */
const COMPOSERS = ['src/vcs/', 'src/cli/', 'src/dashboard/io/'];

/** Whether a file has `new <name>(...)` in its code (not in a comment or a string). */
function constructs(file: string, name: string): boolean {
  const text = readFileSync(join(ROOT, file), 'utf8');
  if (!text.includes(name)) return false;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  let found = false;
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === name)
      found = true;
    else ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

type Kind = 'import' | 'type' | 'import()' | 'export from';
interface Edge {
  from: string;
  to: string;
  spec: string;
  kind: Kind;
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) return sources(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

const isFile = (p: string) => {
  try {
    return statSync(join(ROOT, p)).isFile();
  } catch {
    return false;
  }
};

/** The repo-relative file a relative specifier names ('./x.js' is x.ts or x.tsx). */
function resolveSpec(from: string, spec: string): string | null {
  const base = relative(ROOT, resolve(ROOT, dirname(from), spec))
    .split('\\')
    .join('/');
  const stem = base.replace(/\.(js|jsx|ts|tsx)$/, '');
  for (const c of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}/index.ts`]) if (isFile(c)) return c;
  return null;
}

/** Every import of a file, by the compiler's own parse (comments and strings are not imports). */
function importsOf(file: string, text = readFileSync(join(ROOT, file), 'utf8')): Omit<Edge, 'to'>[] {
  const sf = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    false,
    file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const out: Omit<Edge, 'to'>[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const typeOnly =
        c !== undefined &&
        (c.isTypeOnly ||
          (c.name === undefined &&
            c.namedBindings !== undefined &&
            ts.isNamedImports(c.namedBindings) &&
            c.namedBindings.elements.length > 0 &&
            c.namedBindings.elements.every((e) => e.isTypeOnly)));
      out.push({ from: file, spec: node.moduleSpecifier.text, kind: typeOnly ? 'type' : 'import' });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      out.push({ from: file, spec: node.moduleSpecifier.text, kind: 'export from' });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      out.push({ from: file, spec: node.arguments[0].text, kind: 'import()' });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const lit = node.argument.literal;
      if (ts.isStringLiteral(lit)) out.push({ from: file, spec: lit.text, kind: 'type' });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const layerOf = (file: string): number => LAYERS.findIndex((l) => l.holds.some((h) => file.startsWith(h)));

/** The folder a file counts as for folder cycles: src/<top> (src/cli/* is one), or components. */
const folderOf = (file: string): string => {
  const parts = file.split('/');
  return parts[0] === 'src' && parts.length > 2 ? `src/${parts[1]}` : parts[0] === 'src' ? file : parts[0]!;
};

/** Strongly connected components with more than one member (or a self-loop), by Tarjan. */
function cycles(nodes: string[], next: (n: string) => string[]): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const strong = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of next(v)) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || next(v).includes(v)) found.push(comp.sort());
    }
  };
  for (const n of nodes) if (!idx.has(n)) strong(n);
  return found;
}

function readTree(): { files: string[]; edges: Edge[]; unresolved: string[] } {
  const files = [...sources('src'), ...sources('components')].sort();
  const edges: Edge[] = [];
  const unresolved: string[] = [];
  for (const f of files)
    for (const i of importsOf(f)) {
      if (!i.spec.startsWith('.')) continue; // a package
      const to = resolveSpec(f, i.spec);
      if (to === null) unresolved.push(`${f}: ${i.spec}`);
      else edges.push({ ...i, to });
    }
  return { files, edges, unresolved };
}

const show = (e: Edge) => `${e.from} -> ${e.to} (${e.kind} '${e.spec}')`;

describe('layers', () => {
  const { files, edges, unresolved } = readTree();

  it('reads the tree (every relative import names a file)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(300);
    expect(unresolved).toEqual([]);
  });

  it('places every file of src/ and components/ in a layer', () => {
    const unplaced = files.filter((f) => layerOf(f) < 0);
    expect(unplaced, 'add its folder to LAYERS in test/unit/layers.test.ts and CONTRIBUTING.md').toEqual([]);
  });

  it('imports nothing from a higher layer', () => {
    const upward = edges
      .filter((e) => layerOf(e.to) > layerOf(e.from))
      .map(
        (e) => `${show(e)}: ${LAYERS[layerOf(e.from)]!.name} may not import ${LAYERS[layerOf(e.to)]!.name}`,
      );
    expect(upward).toEqual([]);
  });

  it('has no import cycle between files (type-only and import() count too)', () => {
    const out = new Map<string, string[]>();
    for (const e of edges) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
    const found = cycles(files, (f) => out.get(f) ?? []).map((c) =>
      edges
        .filter((e) => c.includes(e.from) && c.includes(e.to))
        .map(show)
        .join('\n'),
    );
    expect(found).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    const out = new Map<string, Set<string>>();
    for (const e of edges) {
      const a = folderOf(e.from);
      const b = folderOf(e.to);
      if (a !== b) out.set(a, (out.get(a) ?? new Set()).add(b));
    }
    const folders = [...new Set(files.map(folderOf))];
    const found = cycles(folders, (f) => [...(out.get(f) ?? [])]).map((c) =>
      edges
        .filter((e) => folderOf(e.from) !== folderOf(e.to))
        .filter((e) => c.includes(folderOf(e.from)) && c.includes(folderOf(e.to)))
        .map(show)
        .join('\n'),
    );
    expect(found).toEqual([]);
  });

  it("keeps the dashboard's view-model and views off its I/O: components/ and src/dashboard/view/ import nothing from src/dashboard/io/", () => {
    const io = edges.filter(
      (e) =>
        (e.from.startsWith('components/') || e.from.startsWith('src/dashboard/view/')) &&
        e.to.startsWith('src/dashboard/io/'),
    );
    expect(io.map(show)).toEqual([]);
  });

  it("reaches landing's git only through LandingVcs: nothing outside src/vcs imports src/vcs/git-landing.ts", () => {
    const direct = edges.filter((e) => e.to === 'src/vcs/git-landing.ts' && !e.from.startsWith('src/vcs/'));
    expect(direct.map(show)).toEqual([]);
  });

  it("makes a GitVcs only in src/vcs and where a whole is composed (the CLI, the dashboard's I/O)", () => {
    const made = files.filter((f) => !COMPOSERS.some((c) => f.startsWith(c)) && constructs(f, 'GitVcs'));
    expect(made, 'take a Vcs (or LandingVcs) as a parameter, made by the caller').toEqual([]);
  });

  it("loads a command's body only when it runs: a group's index.ts imports its own bodies through import()", () => {
    const eager = edges.filter(
      (e) =>
        /^src\/cli\/[^/]+\/index\.ts$/.test(e.from) &&
        dirname(e.to) === dirname(e.from) &&
        e.kind === 'import' &&
        !e.to.endsWith('/options.ts'),
    );
    expect(eager.map(show)).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('see every kind of import and no import in a comment or a string', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from './b.js';",
      "import { type C } from './c.js';",
      "export { d } from './d.js';",
      "const e = () => import('./e.js');",
      "let f: import('./f.js').F;",
      "// import { g } from './g.js';",
      'const h = "import { h } from \'./h.js\'";',
    ].join('\n');
    expect(importsOf('x.ts', text).map((i) => `${i.kind} ${i.spec}`)).toEqual([
      'import ./a.js',
      'type ./b.js',
      'type ./c.js',
      'export from ./d.js',
      'import() ./e.js',
      'type ./f.js',
    ]);
  });

  it('find a cycle and leave a chain alone', () => {
    const g: Record<string, string[]> = { a: ['b'], b: ['c'], c: ['a'], d: ['a'], e: ['e'] };
    expect(cycles(Object.keys(g), (n) => g[n] ?? [])).toEqual([['a', 'b', 'c'], ['e']]);
  });
});
