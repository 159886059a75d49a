/** "1 change", "3 changes": a count with its noun agreeing. */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
