// The tracker fed the message sequences real agents send (opencode 1.18's, as
// recorded from a real run, below) and the ideal ones, plus every rule it keeps.
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countDiff, FileTracker, MAX_ENDED_CALLS, MAX_OPEN_CALLS } from '../../src/agent/file-tracker.js';
import { WorkspaceRoot } from '../../src/agent/workspace-path.js';
import type { FileChange } from '../../src/model/index.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir('ii-tracker-');
afterAll(tmp.cleanup);
const WS = join(tmp.path, 'ws');
mkdirSync(WS);

function tracker() {
  const seen: FileChange[] = [];
  const t = new FileTracker(new WorkspaceRoot(WS), (f) => seen.push(f));
  const feed = (...updates: Record<string, unknown>[]) => {
    for (const u of updates) t.ingest(u);
  };
  return { t, seen, feed };
}

const change = (path: string, o: Partial<FileChange> = {}): FileChange => ({
  path,
  abs_path: join(WS, path),
  is_new: false,
  is_deleted: false,
  additions: 0,
  deletions: 0,
  ...o,
});

describe('FileTracker with opencode 1.18 messages', () => {
  it('a write of a new file: kind early, no kind and no diff on completion, exists:false', () => {
    const { t, seen, feed } = tracker();
    const file = join(WS, 'hello.txt');
    feed(
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'call_1',
        title: 'write',
        kind: 'edit',
        status: 'pending',
        rawInput: {},
      },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'call_1',
        status: 'in_progress',
        kind: 'edit',
        locations: [{ path: file }],
        rawInput: { filePath: file, content: 'hello\nworld\n' },
      },
    );
    expect(t.files()).toEqual([]);
    feed({
      sessionUpdate: 'tool_call_update',
      toolCallId: 'call_1',
      status: 'completed',
      title: 'hello.txt',
      content: [{ type: 'content', content: { type: 'text', text: 'Wrote file successfully.' } }],
      rawOutput: { output: 'Wrote file successfully.', metadata: { filepath: file, exists: false } },
    });
    expect(t.files()).toEqual([change('hello.txt', { is_new: true, additions: 2 })]);
    expect(seen).toHaveLength(1);
  });

  it('an edit: snippet diff with an empty path, counts from metadata.filediff', () => {
    const { t, feed } = tracker();
    const file = join(WS, 'src', 'app.ts');
    feed(
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'e1',
        title: 'edit',
        kind: 'edit',
        status: 'pending',
        rawInput: {},
      },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'e1',
        status: 'in_progress',
        kind: 'edit',
        locations: [{ path: file }],
        rawInput: { filePath: file, oldString: 'a', newString: 'b' },
      },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'e1',
        status: 'completed',
        title: 'src/app.ts',
        content: [{ type: 'diff', path: '', oldText: 'a', newText: 'b\nc' }],
        rawOutput: { metadata: { filediff: { file, additions: 5, deletions: 3 } } },
      },
    );
    expect(t.files()).toEqual([change('src/app.ts', { additions: 5, deletions: 3 })]);
  });

  it('takes the path from rawOutput.metadata.filediff.file, then metadata.filepath, then rawInput.filePath', () => {
    const { t, feed } = tracker();
    feed(
      { sessionUpdate: 'tool_call', toolCallId: 'a', kind: 'edit', status: 'pending' },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'a',
        status: 'completed',
        rawOutput: {
          metadata: {
            filediff: { file: join(WS, 'one.ts'), additions: 1, deletions: 0 },
            filepath: join(WS, 'x'),
          },
        },
      },
      { sessionUpdate: 'tool_call', toolCallId: 'b', kind: 'edit', status: 'pending' },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'b',
        status: 'completed',
        rawOutput: { metadata: { filepath: join(WS, 'two.ts') } },
      },
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'c',
        kind: 'edit',
        status: 'pending',
        rawInput: { filePath: 'three.ts' },
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c', status: 'completed' },
    );
    expect(t.files().map((f) => f.path)).toEqual(['one.ts', 'two.ts', 'three.ts']);
  });

  it('ignores bash edits (no events) and read / search calls', () => {
    const { t, feed } = tracker();
    feed(
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'r',
        kind: 'read',
        status: 'pending',
        locations: [{ path: join(WS, 'a') }],
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 'r', status: 'completed' },
      {
        sessionUpdate: 'tool_call',
        toolCallId: 's',
        kind: 'search',
        status: 'pending',
        locations: [{ path: join(WS, 'b') }],
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 's', status: 'completed' },
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'x',
        kind: 'execute',
        status: 'pending',
        rawInput: { command: 'sed -i s/a/b/ c' },
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 'x', status: 'completed' },
    );
    expect(t.files()).toEqual([]);
  });
});

describe('FileTracker rules', () => {
  it('uses diff blocks first: several files, is_new from a null or empty oldText, counts from the blocks', () => {
    const { t, feed } = tracker();
    feed(
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'm',
        kind: 'edit',
        status: 'in_progress',
        locations: [{ path: join(WS, 'ignored') }],
      },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'm',
        status: 'completed',
        content: [
          { type: 'diff', path: join(WS, 'a.txt'), oldText: null, newText: '1\n2\n3\n' },
          { type: 'diff', path: join(WS, 'b.txt'), oldText: '', newText: 'x' },
          {
            type: 'diff',
            path: join(WS, 'c.txt'),
            oldText: 'keep\nold\nkeep\n',
            newText: 'keep\nnew\nnewer\nkeep\n',
          },
        ],
      },
    );
    expect(t.files()).toEqual([
      change('a.txt', { is_new: true, additions: 3 }),
      change('b.txt', { is_new: true, additions: 1 }),
      change('c.txt', { additions: 2, deletions: 1 }),
    ]);
  });

  it('deduplicates a file edited twice, summing the counts and keeping is_new', () => {
    const { t, feed } = tracker();
    const p = join(WS, 'a.txt');
    feed(
      { sessionUpdate: 'tool_call', toolCallId: '1', kind: 'edit', status: 'pending' },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: '1',
        status: 'completed',
        content: [{ type: 'diff', path: p, oldText: null, newText: 'a\n' }],
      },
      { sessionUpdate: 'tool_call', toolCallId: '2', kind: 'edit', status: 'pending' },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: '2',
        status: 'completed',
        content: [{ type: 'diff', path: p, oldText: 'a\n', newText: 'b\n' }],
      },
      // A repeated completion of the same call counts once.
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: '2',
        status: 'completed',
        content: [{ type: 'diff', path: p, oldText: 'a\n', newText: 'b\n' }],
      },
    );
    expect(t.files()).toEqual([change('a.txt', { is_new: true, additions: 2, deletions: 1 })]);
  });

  it('ignores failed and cancelled calls', () => {
    const { t, feed } = tracker();
    for (const status of ['failed', 'cancelled'])
      feed(
        {
          sessionUpdate: 'tool_call',
          toolCallId: status,
          kind: 'edit',
          status: 'pending',
          locations: [{ path: join(WS, status) }],
        },
        { sessionUpdate: 'tool_call_update', toolCallId: status, status },
        { sessionUpdate: 'tool_call_update', toolCallId: status, status: 'completed' },
      );
    expect(t.files()).toEqual([]);
  });

  it('drops paths outside the workspace, including through .. and a symlink out', () => {
    symlinkSync(tmp.path, join(WS, 'out-link'));
    const { t, feed } = tracker();
    let n = 0;
    for (const p of ['/etc/passwd', join(WS, '..', 'x.txt'), '../y.txt', join(WS, 'in.txt')]) {
      const id = String(n++);
      feed(
        { sessionUpdate: 'tool_call', toolCallId: id, kind: 'edit', status: 'pending' },
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: id,
          status: 'completed',
          content: [{ type: 'diff', path: p, oldText: 'a', newText: 'b' }],
        },
      );
    }
    expect(t.files().map((f) => f.path)).toEqual(['in.txt']);
  });

  it('marks deletes, and forgets a file created then deleted in the same iteration', () => {
    const { t, feed } = tracker();
    feed(
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'd',
        kind: 'delete',
        status: 'pending',
        locations: [{ path: join(WS, 'gone.txt') }],
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 'd', status: 'completed' },
      { sessionUpdate: 'tool_call', toolCallId: 'n', kind: 'edit', status: 'pending' },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'n',
        status: 'completed',
        content: [{ type: 'diff', path: join(WS, 'tmp.txt'), oldText: null, newText: 'x' }],
      },
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'nd',
        kind: 'delete',
        status: 'pending',
        locations: [{ path: join(WS, 'tmp.txt') }],
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 'nd', status: 'completed' },
    );
    expect(t.files()).toEqual([change('gone.txt', { is_deleted: true })]);
  });

  it('counts an "other" call only with evidence of a change', () => {
    const { t, feed } = tracker();
    feed(
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'o1',
        kind: 'other',
        status: 'pending',
        locations: [{ path: join(WS, 'a') }],
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 'o1', status: 'completed' },
      { sessionUpdate: 'tool_call', toolCallId: 'o2', status: 'pending' },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'o2',
        status: 'completed',
        content: [{ type: 'diff', path: join(WS, 'b'), oldText: 'x', newText: 'y' }],
      },
    );
    expect(t.files().map((f) => f.path)).toEqual(['b']);
  });

  it('ignores anything that is not a tool call', () => {
    const { t, feed } = tracker();
    feed(
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } },
      {
        sessionUpdate: 'tool_call',
        toolCallId: '1',
        kind: 'edit',
        status: 'completed',
        content: [{ type: 'diff', path: join(WS, 'a'), oldText: null, newText: 'x' }],
      },
    );
    expect(t.files()).toHaveLength(1);
  });
});

describe('FileTracker under a flood of tool calls', () => {
  it('holds a bounded number of calls, still counts an edit once, and ignores its late repeat', () => {
    const { t, feed } = tracker();
    const edit = (status: string) => ({
      sessionUpdate: 'tool_call_update',
      toolCallId: 'the-edit',
      kind: 'edit',
      status,
      content: [{ type: 'diff', path: join(WS, 'kept.txt'), oldText: 'a\n', newText: 'a\nb\n' }],
    });
    feed(edit('in_progress'));
    for (let i = 0; i < 20_000; i++) {
      // Reads that complete, and calls that never end.
      feed({ sessionUpdate: 'tool_call', toolCallId: `r${i}`, kind: 'read', status: 'in_progress' });
      feed({ sessionUpdate: 'tool_call_update', toolCallId: `r${i}`, status: 'completed' });
      feed({ sessionUpdate: 'tool_call', toolCallId: `open${i}`, kind: 'edit', locations: [{ path: WS }] });
    }
    expect(t.held()).toBeLessThanOrEqual(MAX_OPEN_CALLS + MAX_ENDED_CALLS);
    feed(edit('completed'), edit('completed'));
    expect(t.files()).toEqual([change('kept.txt', { additions: 1 })]);
  });
});

describe('countDiff', () => {
  it('counts the lines between the common head and tail', () => {
    expect(countDiff(null, 'a\nb\n')).toEqual({ additions: 2, deletions: 0 });
    expect(countDiff('a\nb\nc\n', 'a\nc\n')).toEqual({ additions: 0, deletions: 1 });
    expect(countDiff('same', 'same')).toEqual({ additions: 0, deletions: 0 });
  });
});
