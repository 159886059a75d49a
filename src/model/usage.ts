// Money without float noise. Costs are kept as whole micro-dollars wherever
// they are summed (the store's columns, every addition here), and a cost in
// dollars is always micros / 1e6: a double that prints as the short decimal
// it stands for (0.0234), where adding dollar floats printed
// 0.023399999999999997. Agents report whatever they like, so anything that is
// not a finite, non-negative amount counts as nothing, and a sum stops at the
// largest integer a double holds exactly.
import type { AgentPurpose, AgentSessionRef, Usage } from './job.js';

import { ZERO_USAGE } from './zero-usage.js';

export { ZERO_USAGE };

/** About nine billion dollars: more than any job costs, and exact as a double. */
export const MAX_MICROS = Number.MAX_SAFE_INTEGER;

/** Whole micro-dollars of a dollar amount (0 for anything that is not a cost). */
export function toMicros(usd: number): number {
  if (!Number.isFinite(usd) || usd <= 0) return 0;
  return Math.min(MAX_MICROS, Math.round(usd * 1e6));
}

export const fromMicros = (micros: number): number => micros / 1e6;

const tokens = (n: number): number =>
  Number.isFinite(n) && n > 0 ? Math.min(Number.MAX_SAFE_INTEGER, Math.floor(n)) : 0;

/** `u` with whole token counts and a cost rounded to the micro-dollar. */
export function normalizeUsage(u: Usage): Usage {
  return {
    input_tokens: tokens(u.input_tokens),
    output_tokens: tokens(u.output_tokens),
    cost: fromMicros(toMicros(u.cost)),
  };
}

/** Sum of usages, the cost added in micro-dollars. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: tokens(a.input_tokens + b.input_tokens),
    output_tokens: tokens(a.output_tokens + b.output_tokens),
    cost: fromMicros(Math.min(MAX_MICROS, toMicros(a.cost) + toMicros(b.cost))),
  };
}

/** a − b, never below zero. */
export function subtractUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: Math.max(0, a.input_tokens - b.input_tokens),
    output_tokens: Math.max(0, a.output_tokens - b.output_tokens),
    cost: fromMicros(Math.max(0, toMicros(a.cost) - toMicros(b.cost))),
  };
}

/**
 * A cost in dollars, as every view shows one: four decimals under a dollar,
 * where an iteration's cost lives (two would show most of them as $0.00 or
 * $0.01), two from a dollar up, where the cents are all that still tells.
 * "$0.0234", "$12.50".
 */
export const formatCost = (usd: number): string => `$${usd.toFixed(Math.abs(usd) < 1 ? 4 : 2)}`;

export type StageUsage = Usage & { sessions: number };

/** The stages in loop order, as views list them. */
export const USAGE_STAGES: readonly AgentPurpose[] = [
  'implement',
  'review',
  'commit-message',
  'project-review',
];

/**
 * Usage per stage (agent-session purpose), from the sessions that recorded
 * their own; `recorded` counts those sessions.
 */
export function usageByStage(sessions: readonly AgentSessionRef[]): {
  by: Partial<Record<AgentPurpose, StageUsage>>;
  attributed: Usage;
  recorded: number;
} {
  const by: Partial<Record<AgentPurpose, StageUsage>> = {};
  let attributed: Usage = ZERO_USAGE;
  let recorded = 0;
  for (const s of sessions) {
    if (!s.usage) continue;
    recorded++;
    const prev = by[s.purpose] ?? { ...ZERO_USAGE, sessions: 0 };
    by[s.purpose] = { ...addUsage(prev, s.usage), sessions: prev.sessions + 1 };
    attributed = addUsage(attributed, s.usage);
  }
  return { by, attributed, recorded };
}
