/**
 * No tokens, no cost: the default of every Usage (the schema's in job.ts, the
 * store's). A file of its own so the store reads it without loading zod.
 */
export const ZERO_USAGE: Readonly<{ input_tokens: number; output_tokens: number; cost: number }> =
  Object.freeze({
    input_tokens: 0,
    output_tokens: 0,
    cost: 0,
  });
