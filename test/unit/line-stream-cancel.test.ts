// The ACP line stream once the SDK has let go of it: its close() cancels the
// reader, and what the agent still writes (its answer to a cancelled prompt,
// arriving after its exit was seen) must be dropped, not thrown from the
// stdout 'data' handler, where it was an uncaught exception ending `ii job do`
// on Ctrl-C before the job's end was recorded (job-loop.test.ts, under load).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { lineStream } from '../../src/agent/line-stream.js';
import { TranscriptRecorder } from '../../src/agent/transcript-recorder.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('a line that arrives after the reader was cancelled is dropped, not thrown', async () => {
  dir = mkdtempSync(join(tmpdir(), 'ii-linestream-'));
  const stdout = new PassThrough();
  const recorder = new TranscriptRecorder(join(dir, 't.jsonl'));
  const warnings: string[] = [];
  const { readable } = lineStream(
    stdout,
    new PassThrough(),
    recorder,
    { onUpdate: () => {}, onWarning: (m) => warnings.push(m), onFatal: () => {}, onNotAcp: () => {} },
    1024 * 1024,
  );
  const reader = readable.getReader();
  const line = (id: number) =>
    JSON.stringify({ jsonrpc: '2.0', id, result: { stopReason: 'cancelled' } }) + '\n';
  stdout.emit('data', line(1));
  expect((await reader.read()).value).toMatchObject({ id: 1 });
  // What the SDK's ClientConnection.close() does.
  await reader.cancel(new Error('ACP connection closed'));
  expect(() => stdout.emit('data', line(2))).not.toThrow();
  expect(warnings).toEqual([]);
  recorder.end();
});
