import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import {
  fitHeapToBoard,
  followBoardSize,
  heapMode,
  SMALL_BOARD_JOBS,
  tuneHeapForDashboard,
} from '../../src/cli/dashboard/heap.js';

describe("the dashboard's heap", () => {
  it('is sized for speed on a small board, and for size again once the board holds SMALL_BOARD_JOBS or has loaded a log', () => {
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
    // A small board with a job's log loaded: for size (a flooding job's log is read whole again as it streams).
    fitHeapToBoard(3, 1);
    expect(heapMode()).toBe('size');
    fitHeapToBoard(3, 0);
    expect(heapMode()).toBe('speed');

    // followBoardSize: fitted as the board is loaded, and as its jobs change.
    const board = createStore<{ jobs: readonly unknown[] }>(() => ({ jobs: [1, 2, 3] }));
    const stop = followBoardSize(board);
    expect(heapMode()).toBe('speed');
    board.setState({ jobs: Array.from({ length: SMALL_BOARD_JOBS }, (_, i) => i) });
    expect(heapMode()).toBe('size');
    stop();
    // And as it loads a log (l): the board's store keeps them in records.
    const logs = createStore<{ jobs: readonly unknown[]; records: Record<string, unknown> }>(() => ({
      jobs: [1, 2, 3],
      records: {},
    }));
    const stopLogs = followBoardSize(logs);
    expect(heapMode()).toBe('speed');
    logs.setState({ records: { a: {} } });
    expect(heapMode()).toBe('size');
    stopLogs();
    // Left with V8's own flags (no-optimize-for-size, growth 0) for this worker's other tests.
    fitHeapToBoard(0);
    expect(heapMode()).toBe('speed');
  });
});
