// A job's log into the shared store (state/log-shipper.ts): what one batch
// costs on PostgreSQL (a private server this bench starts on a Unix socket)
// by its size, as a ratio to a one-line append (the round trip a line would
// cost if each were written alone), and what the shipper makes of a stream
// of transcript-sized lines: batches, lines per batch, ms per batch.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase } from './seed-store.js';
import { median, round, sample } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { openPgStore } = await import(join(root, 'dist', 'src', 'state', 'pg', 'index.js'));
const { LogShipper } = await import(join(root, 'dist', 'src', 'state', 'log-shipper.js'));
const { startPgServer } = await import(join(root, 'test', 'helpers', 'pg-server.ts'));

/** A line as an agent's transcript holds it: a session/update of ~300 bytes. */
const line = (i) =>
  JSON.stringify({
    t: Date.now(),
    dir: 'in',
    message: {
      jsonrpc: '2.0',
      method: 'session/update',
      params: {
        sessionId: 's',
        update: {
          sessionUpdate: 'agent_message_chunk',
          content: { type: 'text', text: `chunk ${i} `.repeat(20) },
        },
      },
    },
  });

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-logs-'));
  const server = await startPgServer();
  let store = null;
  try {
    const url = await createDatabase(server, 'ii_bench_logs');
    store = await openPgStore(url, { dir: join(tmp, 'incrementum') });
    const sizes = [1, 10, 100, 1000];
    const times = Object.fromEntries(sizes.map((n) => [n, []]));
    let k = 0;
    // Interleaved, so every size sees the same load.
    for (let r = 0; r < 15; r++)
      for (const n of sizes) {
        const lines = Array.from({ length: n }, () => line(k++));
        times[n].push(...(await sample(1, () => store.logs.append('bench-job', 'transcript:a', lines))));
      }
    const one = median(times[1]);
    const rows = sizes.map((n) => ({
      name: `PostgreSQL append of a ${n}-line batch (~300 B lines), median`,
      value: round(median(times[n])),
      unit: 'ms',
      floor: round(one),
      ratio: round(median(times[n]) / one),
      goal: `report (floor: 1 line; ${n} lines alone: ${round(one * n)} ms)`,
    }));
    // The shipper under an agent streaming 5,000 lines as fast as it can, 50 at a tick.
    const shipper = new LogShipper({ store: store.logs, warn: () => {} });
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) {
      shipper.add(
        'ship-job',
        'transcript:b',
        Array.from({ length: 50 }, () => line(k++)),
      );
      await new Promise((r) => setImmediate(r));
    }
    await shipper.close();
    const wall = performance.now() - t0;
    const s = shipper.stats;
    rows.push({
      name: `shipper: 5,000 streamed lines in ${s.batches} batches, ms per batch`,
      value: round(s.ms / s.batches),
      unit: 'ms',
      goal: `report (${round(s.lines / s.batches, 1)} lines a batch, all sent ${round(wall)} ms after the first)`,
    });
    return rows;
  } finally {
    await store?.close();
    await server.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}
