import { Box, Text } from 'ink';
import { helpRows } from '../src/live/keymap.js';
import { Lines } from './Lines.js';

export interface HelpOverlayProps {
  width: number;
  height: number;
  scroll: number;
}

/** The keys, generated from the keymap table the handler uses. */
export function HelpOverlay({ width, height, scroll }: HelpOverlayProps) {
  const rows = helpRows();
  const w = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, d]) => `  ${k.padEnd(w)}  ${d}`);
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text bold>Keys (esc closes)</Text>
      <Lines lines={lines} width={width} height={height - 1} scroll={scroll} />
    </Box>
  );
}
