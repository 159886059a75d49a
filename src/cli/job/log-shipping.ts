// A job's log into the shared store: when the store is PostgreSQL
// (II_DATABASE_URL), the command running a job installs a LogShipper as this
// process's log mirror (state/log-mirror.ts), so its events and transcripts
// reach other machines' `ii job logs` and dashboards, and ends it with the
// job, sending what is left. The connection is made on the first send and
// made again after a loss: a server away at the start or mid-job costs a
// warning and a wait, never the job or a line of its local files.
import { LogShipper } from '../../state/log-shipper.js';
import { logMirror, setLogMirror } from '../../state/log-mirror.js';
import { databaseUrl, openAsyncStateStore } from '../../state/open-async.js';
import type { AsyncStateStore } from '../../state/async-api.js';

export interface LogShipping {
  shipper: LogShipper;
  /** Sends what is left (trying for up to 10 s) and closes the connection. */
  close(): Promise<void>;
}

/** Starts mirroring this process's job logs to the shared store; null when the store is local (SQLite). */
export function shipJobLogs(dir: string, warn: (message: string) => void): LogShipping | null {
  const url = databaseUrl();
  if (url === null) return null;
  let opening: Promise<AsyncStateStore> | null = null;
  let connectMs = 0;
  const store = () =>
    (opening ??= (async () => {
      const at = performance.now();
      const s = await openAsyncStateStore({ dir, url });
      connectMs += performance.now() - at;
      return s;
    })().catch((err: unknown) => {
      opening = null; // tried again with the next batch
      throw err;
    }));
  const shipper = new LogShipper({
    store: {
      append: async (jobId, stream, lines) => (await store()).logs.append(jobId, stream, lines),
      read: async (jobId, o) => (await store()).logs.read(jobId, o),
    },
    warn,
  });
  // Inside withStore's mirror (mirrorJobLogs): that one takes the lines again once this one ends.
  const outer = logMirror();
  setLogMirror(shipper);
  return {
    shipper,
    async close() {
      await shipper.close();
      setLogMirror(outer);
      if (process.env.II_LOG_SHIP_STATS) {
        // Figures for the tests and measurements: the connection (made with the first batch) apart.
        const { batches, lines, failures } = shipper.stats;
        const ms = shipper.stats.ms - connectMs;
        process.stderr.write(
          `log shipping: ${batches} batches, ${lines} lines, ${ms.toFixed(1)} ms in all (${batches ? (ms / batches).toFixed(2) : 0} ms and ${batches ? (lines / batches).toFixed(1) : 0} lines a batch) after ${connectMs.toFixed(1)} ms to connect, ${failures} failed\n`,
        );
      }
      const s = opening;
      opening = null;
      if (s) await (await s.catch(() => null))?.close();
    },
  };
}

/**
 * The log mirror of a command on the shared store (cli/context.ts withStore):
 * the job events it appends (a landing's, an abandon's, a dead runner's
 * `finished`) are sent over `store`, so the store keeps each job's whole log
 * wherever it is written. Null when a mirror is installed already (a nested
 * withStore). close() sends what is left (trying for up to 10 s) and removes it.
 */
export function mirrorJobLogs(
  store: AsyncStateStore,
  warn: (message: string) => void = (m) => process.stderr.write(`warning: ${m}\n`),
): { close(): Promise<void> } | null {
  if (logMirror() !== null) return null;
  const shipper = new LogShipper({ store: store.logs, warn });
  setLogMirror(shipper);
  return {
    async close() {
      await shipper.close();
      if (logMirror() === shipper) setLogMirror(null);
    },
  };
}
