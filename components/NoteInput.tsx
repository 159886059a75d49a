import { shortJobId } from '../src/model/job-id.js';
import { Box, Text } from 'ink';
import type { RejectNote } from '../src/dashboard/view/state.js';
import { visibleLine } from '../src/text/sanitize.js';
import { paint } from './tone.js';

export interface NoteInputProps {
  note: RejectNote;
  width: number;
  color: boolean;
}

/** Rows the note input takes: its border, what it is for, the line being typed. */
export const NOTE_INPUT_HEIGHT = 4;

const cutStart = (text: string, max: number) => (text.length <= max ? text : `…${text.slice(-(max - 1))}`);

/** The rejection's note (n in a question), sent to the agent with the answer; its end kept in view. */
export function NoteInput({ note, width, color }: NoteInputProps) {
  const w = Math.min(width, 100);
  const label = 'note: ';
  return (
    <Box borderStyle="round" borderColor={paint(color, 'red')} width={w} paddingX={1} flexDirection="column">
      <Text wrap="truncate-end" dimColor>
        reject job {shortJobId(note.jobId)}&apos;s request · enter sends (with this note) · esc goes back
      </Text>
      <Text wrap="truncate-end">
        <Text bold>{label}</Text>
        {cutStart(visibleLine(note.text), Math.max(1, w - 4 - label.length - 1))}
        <Text inverse> </Text>
      </Text>
    </Box>
  );
}
