import { Box, Text } from 'ink';
import { memo } from 'react';
import type { CardData } from '../src/dashboard/view/board.js';
import { visibleLine } from '../src/text/sanitize.js';
import { toneColor } from './tone.js';

export interface CardProps {
  card: CardData;
  selected: boolean;
  width: number;
  color: boolean;
}

/** Card height in lines; Column windows by it. */
export const CARD_HEIGHT = 2;

function CardView({ card, selected, width, color }: CardProps) {
  return (
    <Box flexDirection="column" width={width} height={CARD_HEIGHT}>
      <Text wrap="truncate-end" inverse={selected} bold={card.stale} color={toneColor(card.tone, color)}>
        {visibleLine(card.title)}
      </Text>
      <Text wrap="truncate-end" dimColor={!selected}>
        {' '}
        {visibleLine(card.detail)}
      </Text>
    </Box>
  );
}

/** Re-renders only when what the card shows changes (its version), its selection or its width. */
export const Card = memo(
  CardView,
  (a, b) =>
    a.card.key === b.card.key &&
    a.card.version === b.card.version &&
    a.card.title === b.card.title &&
    a.card.detail === b.card.detail &&
    a.selected === b.selected &&
    a.width === b.width &&
    a.color === b.color,
);
