import { Box, Text } from 'ink';
import { helpSections } from '../src/dashboard/view/keymap.js';
import { wrapLine } from '../src/text/wrap.js';
import { Lines } from './Lines.js';

export interface HelpOverlayProps {
  width: number;
  height: number;
  scroll: number;
}

/** The keys, grouped by what they do, generated from the keymap table the handler uses. */
export function HelpOverlay({ width, height, scroll }: HelpOverlayProps) {
  const sections = helpSections();
  const w = Math.max(...sections.flatMap((s) => s.rows.map(([k]) => k.length)));
  const lines = sections.flatMap((s, i) => [
    ...(i ? [''] : []),
    s.title,
    // A description wraps under itself, not under the keys: at 80 columns the
    // longest ones were cut mid-word.
    ...s.rows.flatMap(([k, d]) =>
      wrapLine(d, Math.max(10, width - w - 4)).map((l, j) => `  ${(j ? '' : k).padEnd(w)}  ${l}`),
    ),
  ]);
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text bold>Keys (esc closes)</Text>
      <Lines lines={lines} width={width} height={height - 1} scroll={scroll} />
    </Box>
  );
}
