// The text `ii job do` opens in $EDITOR when it is given no todo, and its
// parser. Pure: the CLI does the file and the editor.
import { UserError } from '../errors.js';
import { TodoType } from '../model/todo.js';
import type { NewTodo } from '../state/api.js';

const MARK = '---';

/** The editable text, prefilled with whatever was given (the command line's, or the todo being edited). */
export function todoTemplate(
  given: Partial<NewTodo> = {},
  heading = '# New todo for `ii job do`. Lines starting with # are ignored.',
): string {
  return [
    heading,
    '# Give it a title; everything below the --- line is the description.',
    `# type: ${TodoType.options.join(' | ')}   priority: 0 (highest) to 4 (lowest)`,
    '# deps: comma-separated ids of todos this one depends on',
    `title: ${given.title ?? ''}`,
    `type: ${given.type ?? 'task'}`,
    `priority: ${given.priority ?? 2}`,
    `deps: ${(given.deps ?? []).join(', ')}`,
    MARK,
    given.description ?? '',
  ].join('\n');
}

/** The todo described by an edited template; UserError for an empty title or a bad field. */
export function parseTodoTemplate(text: string): NewTodo {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const sep = lines.findIndex((l) => l.trim() === MARK);
  const head = (sep === -1 ? lines : lines.slice(0, sep)).filter((l) => !l.trimStart().startsWith('#'));
  const description =
    sep === -1
      ? ''
      : lines
          .slice(sep + 1)
          .filter((l) => !l.startsWith('#'))
          .join('\n')
          .trim();
  const fields = new Map<string, string>();
  for (const l of head) {
    const m = /^\s*([a-z]+)\s*:(.*)$/i.exec(l);
    if (m) fields.set(m[1]!.toLowerCase(), m[2]!.trim());
    else if (l.trim())
      throw new UserError(`cannot read the todo: unexpected line "${l.trim()}" (expected "key: value").`);
  }
  const title = fields.get('title') ?? '';
  if (!title) throw new UserError('the todo has no title: nothing was created.');
  const type = TodoType.safeParse((fields.get('type') || 'task').toLowerCase());
  if (!type.success)
    throw new UserError(
      `unknown todo type "${fields.get('type')}": use one of ${TodoType.options.join(', ')}.`,
    );
  const prio = Number(fields.get('priority') || '2');
  if (!Number.isInteger(prio) || prio < 0 || prio > 4)
    throw new UserError(`priority "${fields.get('priority')}" is not an integer from 0 to 4.`);
  const deps = (fields.get('deps') ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
  return { title, description, type: type.data, priority: prio, deps };
}
