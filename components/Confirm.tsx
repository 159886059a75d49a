import { Box, Text } from 'ink';
import { paint } from './tone.js';

export interface ConfirmProps {
  prompt: string;
  width: number;
  color: boolean;
}

/** A y/n question that takes the keys until answered. */
export function Confirm({ prompt, width, color }: ConfirmProps) {
  return (
    <Box borderStyle="round" borderColor={paint(color, 'yellow')} width={Math.min(width, 70)} paddingX={1}>
      <Text wrap="truncate-end">
        {prompt} <Text bold>y</Text>/<Text bold>n</Text>
      </Text>
    </Box>
  );
}
