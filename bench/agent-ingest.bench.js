// Agent update ingest: session/update lines as an agent writes them, through
// our line stream (parse, transcript record, dispatch) into the file tracker,
// with the transcript really appended to disk. Shown as messages per second
// and as a ratio to the floor: JSON.parse of the same lines, nothing else.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { median, round } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(join(root, 'dist', 'src', 'agent', p));
const { lineStream } = await dist('line-stream.js');
const { TranscriptRecorder } = await dist('transcript-recorder.js');
const { FileTracker } = await dist('file-tracker.js');
const { WorkspaceRoot } = await dist('workspace-path.js');

/** A realistic mix: per edit, opencode's three tool messages, plus streamed text. */
function lines(ws, n) {
  const out = [];
  const note = (update) =>
    JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1', update } });
  for (let i = 0; out.length < n; i++) {
    const id = `call_${i}`;
    const path = join(ws, 'src', `file${i % 200}.ts`);
    out.push(
      note({
        sessionUpdate: 'tool_call',
        toolCallId: id,
        title: 'edit',
        kind: 'edit',
        status: 'pending',
        rawInput: {},
      }),
    );
    out.push(
      note({
        sessionUpdate: 'tool_call_update',
        toolCallId: id,
        status: 'in_progress',
        kind: 'edit',
        locations: [{ path }],
        rawInput: { filePath: path, oldString: 'const a = 1;', newString: 'const a = 2;\nconst b = 3;' },
      }),
    );
    out.push(
      note({
        sessionUpdate: 'tool_call_update',
        toolCallId: id,
        status: 'completed',
        title: `src/file${i % 200}.ts`,
        content: [{ type: 'diff', path, oldText: 'const a = 1;\n', newText: 'const a = 2;\nconst b = 3;\n' }],
        rawOutput: { metadata: { filediff: { file: path, additions: 2, deletions: 1 } } },
      }),
    );
    for (let k = 0; k < 5; k++)
      out.push(
        note({
          sessionUpdate: 'agent_message_chunk',
          content: { type: 'text', text: `token ${k} of message ${i} ` },
        }),
      );
  }
  return out.slice(0, n);
}

async function ingestOnce(tmp, text, count) {
  const ws = join(tmp, 'ws');
  const recorder = new TranscriptRecorder(join(tmp, `t-${Math.random().toString(36).slice(2)}.jsonl`));
  const tracker = new FileTracker(new WorkspaceRoot(ws));
  let seen = 0;
  let done;
  const finished = new Promise((r) => (done = r));
  const stdout = new PassThrough();
  const stdin = new Writable({ write: (_c, _e, cb) => cb() });
  lineStream(
    stdout,
    stdin,
    recorder,
    {
      onUpdate: (p) => {
        tracker.ingest(p.update);
        if (++seen === count) done();
      },
      onWarning: () => {},
      onFatal: (m) => {
        throw new Error(m);
      },
    },
    32 * 1024 * 1024,
  );
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < text.length; i += 65536) stdout.write(text.slice(i, i + 65536));
  stdout.end();
  await finished;
  recorder.flush();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (tracker.files().length !== 200)
    throw new Error(`tracker saw ${tracker.files().length} files, expected 200`);
  if (statSync(recorder.path).size < text.length) throw new Error('transcript is short');
  return ms;
}

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-ingest-'));
  try {
    const n = 50_000;
    const ls = lines(join(tmp, 'ws'), n);
    const text = ls.join('\n') + '\n';
    await ingestOnce(tmp, text, n); // warm up
    const ingest = [];
    const floor = [];
    for (let r = 0; r < 5; r++) {
      ingest.push(await ingestOnce(tmp, text, n));
      const t0 = process.hrtime.bigint();
      let sink = 0;
      for (const l of ls) sink += JSON.parse(l).params ? 1 : 0;
      if (sink !== n) throw new Error('floor miscounted');
      floor.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const rate = (n / median(ingest)) * 1000;
    const floorRate = (n / median(floor)) * 1000;
    return [
      {
        name: 'session/update ingest (line stream + transcript + tracker)',
        value: Math.round(rate),
        unit: 'msg/s',
        floor: Math.round(floorRate),
        ratio: round(floorRate / rate),
        goal: '>= 20000 msg/s',
      },
    ];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
