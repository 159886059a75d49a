import { Box, Text } from 'ink';
import { wrapClamp } from '../src/text/wrap.js';
import { paint } from './tone.js';

export interface ConfirmProps {
  prompt: string;
  /** Answers beyond y/n the question offers (keymap.ts extraAnswers), each on a line of its own. */
  extras?: { key: string; answer: string }[];
  width: number;
  color: boolean;
}

/** Lines a question may take: a landing's names its target, commits and tests. */
const MAX_LINES = 4;
/** The box's border and padding around the question. */
const FRAME = 4;
/** Room for " y/n" after the question's last line. */
const ANSWER = ' y/n';

const boxWidth = (width: number) => Math.min(width, 100);

/** The question's lines at a screen width, " y/n" included in the last one's room. */
function promptLines(prompt: string, width: number): string[] {
  return wrapClamp(`${prompt}${ANSWER}`, Math.max(10, boxWidth(width) - FRAME), MAX_LINES);
}

/** An extra answer's line, cut to the box (its key comes first, so it is never lost). */
function extraLine(x: { key: string; answer: string }, width: number): string {
  return wrapClamp(`${x.key} ${x.answer}`, Math.max(10, boxWidth(width) - FRAME), 1)[0] ?? x.key;
}

/** Rows the confirmation takes at a screen width (the board gives them up). */
export const confirmHeight = (prompt: string, width: number, extras = 0): number =>
  promptLines(prompt, width).length + extras + 2;

/** A y/n question that takes the keys until answered; a long one wraps rather than losing its end. */
export function Confirm({ prompt, extras = [], width, color }: ConfirmProps) {
  const lines = promptLines(prompt, width);
  const last = lines.at(-1) ?? '';
  // The answer keys are drawn bold where the wrapped text put them.
  const tail = last.endsWith(ANSWER) ? last.slice(0, -ANSWER.length) : last;
  return (
    <Box
      borderStyle="round"
      borderColor={paint(color, 'yellow')}
      width={boxWidth(width)}
      paddingX={1}
      flexDirection="column"
    >
      {lines.slice(0, -1).map((l, i) => (
        <Text key={i}>{l}</Text>
      ))}
      <Text>
        {tail}
        {last.endsWith(ANSWER) ? (
          <>
            {' '}
            <Text bold>y</Text>/<Text bold>n</Text>
          </>
        ) : null}
      </Text>
      {extras.map((x) => (
        <Text key={x.key}>
          <Text bold>{x.key}</Text>
          {extraLine(x, width).slice(x.key.length)}
        </Text>
      ))}
    </Box>
  );
}
