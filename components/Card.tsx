import { Box, Text } from 'ink';
import { memo } from 'react';
import type { CardData } from '../src/dashboard/view/board.js';
import { visibleLine } from '../src/text/sanitize.js';
import { wrapClamp } from '../src/text/wrap.js';
import { toneColor } from './tone.js';

export interface CardProps {
  card: CardData;
  selected: boolean;
  width: number;
  color: boolean;
  /** Lines the title may take (the board gives two when it has the room and titles are cut). */
  titleLines?: number;
}

/** A card's height in lines: its title's, and the detail line; Column windows by it. */
export const cardHeight = (titleLines: number): number => titleLines + 1;

function CardView({ card, selected, width, color, titleLines = 1 }: CardProps) {
  const title = visibleLine(card.title);
  const lines = titleLines > 1 ? wrapClamp(title, width, titleLines) : [title];
  return (
    <Box flexDirection="column" width={width} height={cardHeight(titleLines)}>
      {lines.map((l, i) => (
        <Text
          key={i}
          wrap="truncate-end"
          inverse={selected}
          bold={card.stale}
          color={toneColor(card.tone, color)}
        >
          {l}
        </Text>
      ))}
      <Text wrap="truncate-end" dimColor={!selected}>
        {' '}
        {visibleLine(card.detail)}
      </Text>
    </Box>
  );
}

/**
 * Re-renders only when what the card shows changes (its title, detail, tone
 * and staleness), its selection or its width. Compared as they are, with no
 * version string kept per card: 10,000 jobs' cards held ~3 MB of them.
 */
export const Card = memo(
  CardView,
  (a, b) =>
    a.card.key === b.card.key &&
    a.card.title === b.card.title &&
    a.card.detail === b.card.detail &&
    a.card.tone === b.card.tone &&
    a.card.stale === b.card.stale &&
    a.selected === b.selected &&
    a.width === b.width &&
    a.color === b.color &&
    a.titleLines === b.titleLines,
);
