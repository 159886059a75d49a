// The `n` form's fields: what each asks, what it accepts, and the todo they
// make. Pure, so the form is tested without a screen; the store checks the
// todo again when it is created (the same checks as ii todo create).
import { TODO_TYPES } from '../../model/enums.js';
import type { FormField, TodoForm } from './state.js';

export interface NewTodoInput {
  title: string;
  type?: (typeof TODO_TYPES)[number];
  priority?: number;
  description?: string;
}

/** What each field asks, with what Enter on an empty field means. */
export const FIELD_PROMPTS: Record<FormField, string> = {
  title: 'title',
  type: `type: ${TODO_TYPES.join(', ')} (enter: task)`,
  priority: 'priority, 0 (first) to 4 (enter: 2)',
  description: 'description (enter: none)',
};

/** Why the text cannot be the field's value, or null. An optional field may be left empty. */
export function formError(field: FormField, text: string): string | null {
  const t = text.trim();
  if (field === 'title') return t ? null : 'a todo needs a title (esc cancels)';
  if (!t) return null;
  if (field === 'type' && !(TODO_TYPES as readonly string[]).includes(t))
    return `the type is one of ${TODO_TYPES.join(', ')}`;
  if (field === 'priority' && !/^[0-4]$/.test(t)) return 'the priority is a number from 0 (first) to 4';
  return null;
}

/** The todo the form's values make. */
export function formTodo(form: Pick<TodoForm, 'values'>): NewTodoInput {
  const v = form.values;
  const type = v.type?.trim();
  const priority = v.priority?.trim();
  const description = v.description?.trim();
  return {
    title: (v.title ?? '').trim(),
    ...(type ? { type: type as NewTodoInput['type'] } : {}),
    ...(priority ? { priority: Number(priority) } : {}),
    ...(description ? { description } : {}),
  };
}
