import { Box, Text } from 'ink';
import { paint } from './tone.js';
import { count } from '../src/dashboard/view/count.js';
import { fitHints, type Hint } from '../src/dashboard/view/keymap.js';
import type { StatusFiles } from '../src/dashboard/view/status-files.js';
import { visibleLine } from '../src/text/sanitize.js';

export interface StatusBarProps {
  repo: string;
  counts: { active: number; stale: number; completed: number; failed: number; abandoned: number };
  /** The selected job's modified files (live from the tracker): its iteration's and its total; null with no job selected. */
  files: StatusFiles | null;
  autoCommit: boolean | null;
  /** The selected job's last commit outcome, for the auto-commit state. */
  lastCommit: string | null;
  filter: string;
  filtering: boolean;
  showFinished: boolean;
  message: string | null;
  /** What is going on before the hints (a marked iteration), or null. */
  lead: string | null;
  hints: Hint[];
  width: number;
  color: boolean;
}

export const STATUS_HEIGHT = 2;

/** Two lines: the repo, counts and the selected job's files and auto-commit; then the message or key hints. */
export function StatusBar(p: StatusBarProps) {
  const c = p.counts;
  const parts = [
    visibleLine(p.repo),
    `${c.active} active${c.stale ? `, ${c.stale} stale` : ''}, ${c.completed} done, ${c.failed} failed, ${c.abandoned} abandoned`,
    // Says which count it is: the spec's per-iteration set; f lists the job's total.
    p.files == null ? null : `${count(p.files.count, 'file')} ${p.files.scope} (f: ${p.files.total} in job)`,
    p.autoCommit == null
      ? null
      : `auto-commit ${p.autoCommit ? 'on' : 'off'}${p.lastCommit ? `: ${p.lastCommit}` : ''}`,
    p.showFinished ? null : 'finished hidden (F)',
  ].filter(Boolean);
  // A message can quote an error that quotes agent text; a filter can be pasted.
  const filter = visibleLine(p.filter);
  const second = p.filtering
    ? `filter: ${filter}▏ (enter apply, esc clear)`
    : p.message != null
      ? visibleLine(p.message)
      : fitHints(
          [p.filter ? `filter "${filter}" (esc clears)` : '', p.lead ?? ''].filter(Boolean).join(' · '),
          p.hints,
          p.width,
        );
  return (
    <Box flexDirection="column" width={p.width} height={STATUS_HEIGHT}>
      <Text inverse wrap="truncate-end">
        {parts.join(' │ ').padEnd(p.width)}
      </Text>
      <Text
        wrap="truncate-end"
        color={p.message ? paint(p.color, 'yellow') : undefined}
        dimColor={!p.message && !p.filtering}
      >
        {second}
      </Text>
    </Box>
  );
}
