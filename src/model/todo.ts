import { z } from 'zod';
import { TODO_STATUSES, TODO_TYPES } from './enums.js';

/** Kinds of work a todo can describe. */
export const TodoType = z.enum(TODO_TYPES);
export type TodoType = z.infer<typeof TodoType>;

/** open → in_progress (a session took it) → done | open again (failed) ; closed by hand. */
export const TodoStatus = z.enum(TODO_STATUSES);
export type TodoStatus = z.infer<typeof TodoStatus>;

export const Todo = z.object({
  id: z.string().min(1),
  repo: z.string(),
  title: z.string().min(1),
  description: z.string().default(''),
  type: TodoType.default('task'),
  /** 0 is the highest priority, 4 the lowest. */
  priority: z.number().int().min(0).max(4).default(2),
  deps: z.array(z.string()).default([]),
  status: TodoStatus.default('open'),
  created_at: z.string(),
  updated_at: z.string(),
  /**
   * When `ii todo reopen` last gave the todo a fresh start: only jobs started
   * after it count against `[run] max-attempts`. Absent in older records.
   */
  reopened_at: z.string().nullable().optional(),
});
export type Todo = z.infer<typeof Todo>;
