import { describe, expect, it } from 'vitest';
import {
  fitHeapToBoard,
  heapMode,
  SMALL_BOARD_JOBS,
  tuneHeapForDashboard,
} from '../../src/cli/dashboard/heap.js';

describe("the dashboard's heap", () => {
  it('is sized for speed on a small board, and for size again once the board holds SMALL_BOARD_JOBS', () => {
    // Not a board's process: left as V8 sizes it.
    fitHeapToBoard(10);
    expect(heapMode()).toBe('default');
    tuneHeapForDashboard();
    expect(heapMode()).toBe('size');
    // 10,000 jobs keep the sizing their RSS goal needs.
    fitHeapToBoard(10_000);
    expect(heapMode()).toBe('size');
    fitHeapToBoard(SMALL_BOARD_JOBS - 1);
    expect(heapMode()).toBe('speed');
    fitHeapToBoard(SMALL_BOARD_JOBS);
    expect(heapMode()).toBe('size');
  });
});
