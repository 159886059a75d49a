import { Box, Text } from 'ink';
import type { TodoForm as Form } from '../src/dashboard/view/state.js';
import { FIELD_PROMPTS } from '../src/dashboard/view/todo-form.js';
import { visibleLine } from '../src/text/sanitize.js';
import { paint } from './tone.js';

export interface TodoFormProps {
  form: Form;
  width: number;
  color: boolean;
}

/** Rows the form takes: its border, what was entered, the field being typed. */
export const TODO_FORM_HEIGHT = 4;

const cutStart = (text: string, max: number) => (text.length <= max ? text : `…${text.slice(-(max - 1))}`);

/** The `n` form: the fields entered so far, and the one being typed (its end kept in view). */
export function TodoForm({ form, width, color }: TodoFormProps) {
  const inner = Math.max(10, Math.min(width, 100) - 4);
  const done = Object.entries(form.values)
    .filter(([, v]) => v.trim())
    .map(([k, v]) => `${k}: ${visibleLine(v.trim())}`)
    .join(' · ');
  const label = `${FIELD_PROMPTS[form.field]}: `;
  return (
    <Box
      borderStyle="round"
      borderColor={paint(color, 'cyan')}
      width={Math.min(width, 100)}
      paddingX={1}
      flexDirection="column"
    >
      <Text wrap="truncate-end" dimColor>
        {done ? `new todo · ${done}` : 'new todo · enter: next field · esc: cancel'}
      </Text>
      <Text wrap="truncate-end">
        <Text bold>{label}</Text>
        {cutStart(visibleLine(form.text), Math.max(1, inner - label.length - 1))}
        <Text inverse> </Text>
      </Text>
    </Box>
  );
}
