// The options of the ii todo commands and their argument parsers (ii job do
// takes the same ones for the todo it creates). Their own file so the wiring
// and the bodies both import them and neither imports the other.
import { InvalidArgumentError } from 'commander';
import type { Todo } from '../../model/todo.js';

export function parsePriority(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 4)
    throw new InvalidArgumentError('priority is an integer from 0 (highest) to 4 (lowest).');
  return n;
}
/** One of `choices`, in any case: commander's own choices() check is lost once an argParser is set. */
export const parseChoice =
  <T extends string>(what: string, choices: readonly T[]) =>
  (v: string): T => {
    const c = choices.find((x) => x === v.toLowerCase());
    if (!c) throw new InvalidArgumentError(`${what} is one of ${choices.join(', ')}.`);
    return c;
  };

export const parseList = (v: string): string[] =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export interface TodoCreateOptions {
  title: string;
  desc?: string;
  /** --description-file: a path, or - for stdin. */
  descriptionFile?: string;
  type: Todo['type'];
  priority: number;
  deps: string[];
  json?: boolean;
}

export interface TodoEditOptions {
  title?: string;
  desc?: string;
  /** --description-file: a path, or - for stdin. */
  descriptionFile?: string;
  type?: Todo['type'];
  priority?: number;
  deps?: string[];
  json?: boolean;
}

export interface TodoListOptions {
  status?: Todo['status'];
  ready?: boolean;
  json?: boolean;
}

export interface TodoShowOptions {
  json?: boolean;
}
