// The first check on parsed JSON from outside (an agent's message, a
// transcript line, a config table): an object whose keys are not yet known.
// Arrays and null are objects to typeof, and never what a caller means.

/** A parsed JSON object, its keys unchecked. */
export type Obj = Record<string, unknown>;

/** Whether a parsed value is a JSON object: not null, not an array. */
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
