// Prompt templates: the shipped ones in templates/, each overridable by a file
// of the same name in <repo>/.incrementum/templates/. Rendered with liquidjs;
// an unknown variable or filter is an error (strict), so a typo in an
// override fails loudly instead of sending the agent a half-empty prompt.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Liquid, type Template } from 'liquidjs';
import { UserError } from '../errors.js';
import { packageRoot } from '../package-root.js';
import type { Todo } from '../model/todo.js';

export const TEMPLATE_NAMES = [
  'implement',
  'review',
  'project-review',
  'commit-message',
  'commit',
  'resolve-conflicts',
] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

export const TEMPLATE_EXT = '.liquid';

/** What each template is for (`ii help templates`). */
export const TEMPLATE_PURPOSE: Record<TemplateName, string> = {
  implement: 'the implement prompt: do the todo, or address the feedback of the last attempt',
  review: 'the review prompt: judge the latest iteration and write .incrementum-feedback',
  'project-review': 'the final review of all the work, when an implement pass changed nothing',
  'commit-message': 'asks the agent for the final commit message in .incrementum-commit-message',
  commit: 'the final commit message itself, built from the agent’s message (Message)',
  'resolve-conflicts':
    'the implement prompt of the change that resolves a landing’s conflicts ([land] on-conflict = "agent"): the files and both sides (Conflicts)',
};

/** The variables every template sees (`ii help templates`). */
export const TEMPLATE_VARIABLES: [string, string][] = [
  ['Todo.ID', 'the todo id'],
  ['Todo.Title', 'the todo title'],
  ['Todo.Description', 'the todo description (may be empty)'],
  ['Todo.Type', 'task, bug, feature or chore'],
  ['Todo.Priority', '0 (highest) to 4 (lowest)'],
  ['Feedback', 'the test-failure table or review comments that started this iteration (empty if none)'],
  ['WorkspacePath', 'the absolute path of the job’s workspace'],
  ['Message', 'the agent’s commit message (commit template; empty elsewhere)'],
  ['BaseRev', 'the commit the job started from'],
  [
    'BaselineFailures',
    'the test commands that already failed on the untouched base (--allow-failing-baseline), as a Markdown list; empty if none',
  ],
  ['Onto', 'the branch the job is being landed on (resolve-conflicts; empty elsewhere)'],
  [
    'Conflicts',
    'the files whose lines both the job and the branch changed, each with both sides as diffs (resolve-conflicts; empty elsewhere)',
  ],
];

export interface TemplateVars {
  Todo: { ID: string; Title: string; Description: string; Type: string; Priority: number };
  Feedback: string;
  WorkspacePath: string;
  Message: string;
  BaseRev: string;
  BaselineFailures: string;
  Onto: string;
  Conflicts: string;
}

export function templateVars(
  todo: Pick<Todo, 'id' | 'title' | 'description' | 'type' | 'priority'>,
  extra: Partial<Omit<TemplateVars, 'Todo'>> = {},
): TemplateVars {
  return {
    Todo: {
      ID: todo.id,
      Title: todo.title,
      Description: todo.description,
      Type: todo.type,
      Priority: todo.priority,
    },
    Feedback: extra.Feedback ?? '',
    WorkspacePath: extra.WorkspacePath ?? '',
    Message: extra.Message ?? '',
    BaseRev: extra.BaseRev ?? '',
    BaselineFailures: extra.BaselineFailures ?? '',
    Onto: extra.Onto ?? '',
    Conflicts: extra.Conflicts ?? '',
  };
}

/** The package's own templates/ folder. */
export const shippedTemplatesDir = (): string => join(packageRoot(), 'templates');

export const overrideTemplatesDir = (repoRoot: string): string => join(repoRoot, '.incrementum', 'templates');

/** The file a template comes from: the repo's override when present, else the shipped one. */
export function templateFile(name: TemplateName, repoRoot: string): { path: string; override: boolean } {
  const own = join(overrideTemplatesDir(repoRoot), name + TEMPLATE_EXT);
  if (existsSync(own)) return { path: own, override: true };
  return { path: join(shippedTemplatesDir(), name + TEMPLATE_EXT), override: false };
}

/** Where the original tool (Go text/template) kept its overrides: never read here. */
export const legacyTemplatesDir = (repoRoot: string): string => join(repoRoot, '.incrementum', 'prompts');

/** The original tool's template names and ours. */
const LEGACY_NAMES: Record<string, TemplateName> = {
  'implement.tmpl': 'implement',
  'review.tmpl': 'review',
  'commit-message.tmpl': 'commit-message',
  'commit.tmpl': 'commit',
};

/**
 * A warning for each `.incrementum/prompts/*.tmpl` override: a user who had
 * customised a prompt for the original tool would otherwise get the shipped
 * prompt with no word said. Each names the file and where it belongs now.
 */
export function legacyTemplateWarnings(repoRoot: string): string[] {
  let names: string[];
  try {
    names = readdirSync(legacyTemplatesDir(repoRoot)).filter((n) => n.endsWith('.tmpl'));
  } catch {
    return [];
  }
  return names.sort().map((n) => {
    const file = join('.incrementum', 'prompts', n);
    const ours = LEGACY_NAMES[n];
    return ours
      ? `${file} is not used: template overrides now live in .incrementum/templates/ and use Liquid. ` +
          `Move it to .incrementum/templates/${ours}${TEMPLATE_EXT} and convert it (README: "Templates"; ii help templates lists the variables).`
      : `${file} is not used: template overrides now live in .incrementum/templates/ (Liquid), ` +
          `and there is no template of that name (ii help templates lists them).`;
  });
}

// The locale named: left out, Liquid asks Intl for the system's at its
// construction, 23 ms of CPU (a tenth of a standby runner's load, which a job
// handed the standby before it waits beside: bench/handover.bench.js). Only
// the date filter uses it, and a prompt reads the same on every machine.
const engine = new Liquid({ strictVariables: true, strictFilters: true, cache: false, locale: 'en-US' });

function templateError(file: string, err: unknown, doing: string): UserError {
  const e = err as Error & { token?: { getPosition?: () => [number, number] } };
  const pos = e.token?.getPosition?.();
  const line = pos ? `line ${pos[0]}` : 'unknown line';
  const message = (e.message ?? String(err)).replace(/, line:\d+, col:\d+$/, '');
  return new UserError(
    `prompt template ${file}, ${line}: ${doing} failed: ${message}\n` +
      `Fix the template (\`ii help templates\` lists the variables), or delete the override to use the shipped one.`,
  );
}

/** The variable tree templates may read: top-level names, and the keys of objects (from TEMPLATE_VARIABLES). */
const KNOWN = new Map<string, Set<string> | null>();
for (const [n] of TEMPLATE_VARIABLES) {
  const [top, key] = n.split('.') as [string, string | undefined];
  if (!key) KNOWN.set(top, null);
  else KNOWN.set(top, (KNOWN.get(top) ?? new Set<string>()).add(key));
}

/**
 * Every variable the template reads that does not exist, with its line.
 * Static: strictVariables only catches the ones on the path a render takes,
 * so `{% if Feedback != blank %}{{ Todo.Titel }}{% endif %}` would pass
 * every first prompt and fail, or print nothing, later.
 */
export function unknownVariables(tpl: Template[]): { name: string; line: number }[] {
  const out: { name: string; line: number }[] = [];
  const globals = engine.analyzeSync(tpl).globals;
  for (const refs of Object.values(globals)) {
    for (const v of refs) {
      const [top, key] = v.segments;
      const name = String(v);
      if (typeof top !== 'string') continue;
      if (!KNOWN.has(top)) out.push({ name, line: v.location.row });
      else if (typeof key === 'string' && KNOWN.get(top)?.has(key) === false)
        out.push({ name, line: v.location.row });
    }
  }
  return out.sort((a, b) => a.line - b.line);
}

/**
 * Templates parsed and checked in this process, by file, with the text they
 * were parsed from: a job's start reads every template three times (the
 * standby's warm-up, the launch's check, the runner's render) and parsing
 * and checking the five took ~9 ms of CPU each time, on the hand-over's way.
 * A file whose text changed is parsed again.
 */
const parsedFiles = new Map<string, { text: string; tpl: Template[] }>();

/** Loads and parses the templates a job uses, once; render() then only renders. */
export class Prompts {
  private readonly parsed = new Map<TemplateName, { file: string; tpl: Template[] }>();

  constructor(private readonly repoRoot: string) {}

  /** Parses every template now, so a broken override fails before any agent runs. */
  loadAll(): this {
    // Every broken template at once (one fix round, not five), each line once.
    const lines: string[] = [];
    for (const n of TEMPLATE_NAMES) {
      try {
        this.load(n);
      } catch (err) {
        if (!(err instanceof UserError)) throw err;
        for (const l of err.message.split('\n')) if (!lines.includes(l)) lines.push(l);
      }
    }
    if (lines.length > 0) {
      // The fix lines (not about one file) go last.
      const about = lines.filter((l) => l.startsWith('prompt template ') || l.startsWith('cannot read'));
      throw new UserError([...about, ...lines.filter((l) => !about.includes(l))].join('\n'));
    }
    return this;
  }

  private load(name: TemplateName): { file: string; tpl: Template[] } {
    const hit = this.parsed.get(name);
    if (hit) return hit;
    const { path } = templateFile(name, this.repoRoot);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new UserError(`cannot read prompt template ${path}: ${(err as Error).message}`);
    }
    const known = parsedFiles.get(path);
    if (known?.text === text) {
      const entry = { file: path, tpl: known.tpl };
      this.parsed.set(name, entry);
      return entry;
    }
    let tpl: Template[];
    try {
      tpl = engine.parse(text, path);
    } catch (err) {
      throw templateError(path, err, 'parsing');
    }
    const unknown = unknownVariables(tpl);
    if (unknown.length > 0)
      throw new UserError(
        unknown.map((u) => `prompt template ${path}, line ${u.line}: unknown variable ${u.name}`).join('\n') +
          `\nThe variables are ${TEMPLATE_VARIABLES.map(([n]) => n).join(', ')} (\`ii help templates\`); fix the name, or delete the override to use the shipped template.`,
      );
    parsedFiles.set(path, { text, tpl });
    const entry = { file: path, tpl };
    this.parsed.set(name, entry);
    return entry;
  }

  /** The rendered prompt; a UserError naming the file and line when it cannot be rendered. */
  async render(name: TemplateName, vars: TemplateVars): Promise<string> {
    const { file, tpl } = this.load(name);
    try {
      return String(await engine.render(tpl, vars)).replace(/\n{3,}/g, '\n\n');
    } catch (err) {
      throw templateError(file, err, 'rendering');
    }
  }
}
