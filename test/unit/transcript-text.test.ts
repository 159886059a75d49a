import { describe, expect, it } from 'vitest';
import { quietSince, transcriptText } from '../../src/job-log/transcript-text.js';
import { silenceLine } from '../../src/dashboard/view/silence.js';

const upd = (update: object) => ({
  jsonrpc: '2.0',
  method: 'session/update',
  params: { sessionId: 's', update },
});

describe('transcriptText', () => {
  it('renders prompt, message chunks, tool calls, plan and the end of the turn', () => {
    const lines = transcriptText([
      { ts: 't', dir: 'out', message: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } },
      {
        dir: 'out',
        message: {
          jsonrpc: '2.0',
          id: 3,
          method: 'session/prompt',
          params: { prompt: [{ type: 'text', text: 'Do it\nwell' }] },
        },
      },
      {
        dir: 'in',
        message: upd({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } }),
      },
      {
        dir: 'in',
        message: upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Writing ' } }),
      },
      {
        dir: 'in',
        message: upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'the file.' } }),
      },
      {
        dir: 'in',
        message: upd({
          sessionUpdate: 'tool_call',
          toolCallId: 'c1',
          kind: 'edit',
          title: 'hello.txt',
          status: 'pending',
        }),
      },
      {
        dir: 'in',
        message: upd({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'in_progress' }),
      },
      {
        dir: 'in',
        message: upd({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed' }),
      },
      { dir: 'in', message: upd({ sessionUpdate: 'plan', entries: [{ content: 'step one' }] }) },
      { type: 'warning', message: 'bad line skipped' },
      { dir: 'in', message: { jsonrpc: '2.0', id: 3, result: { stopReason: 'end_turn' } } },
    ]);
    expect(lines).toEqual([
      '> prompt:',
      '>   Do it',
      '>   well',
      '  (thinking) hmm',
      '  Writing the file.',
      '  [edit] hello.txt (pending)',
      '  [edit] hello.txt (completed)',
      '  plan:',
      '    - step one',
      '  ! bad line skipped',
      '  (turn ended: end_turn)',
    ]);
  });
  it('accepts bare JSON-RPC lines and skips what it does not know', () => {
    expect(
      transcriptText([{ jsonrpc: '2.0', id: 9, error: { message: 'boom' } }, 42, 'x', { foo: 1 }]),
    ).toEqual(['  ! error: boom']);
  });
  it("shows the agent's stderr lines where they came, between its messages", () => {
    expect(
      transcriptText([
        {
          t: 1,
          dir: 'in',
          message: upd({ sessionUpdate: 'agent_message_chunk', content: { text: 'Trying' } }),
        },
        { t: 2, type: 'stderr', message: 'model unreachable: ECONNREFUSED' },
        {
          t: 3,
          dir: 'in',
          message: upd({ sessionUpdate: 'agent_message_chunk', content: { text: 'again' } }),
        },
      ]),
    ).toEqual(['  Trying', '  stderr: model unreachable: ECONNREFUSED', '  again']);
  });
});

describe('quietSince and the silence line', () => {
  const prompt = {
    t: 1000,
    dir: 'out',
    message: { jsonrpc: '2.0', id: 3, method: 'session/prompt', params: {} },
  };
  it('counts from the last entry while the turn goes on; nothing once it ended or when nothing is known', () => {
    expect(quietSince([prompt])).toBe(1000);
    expect(quietSince([prompt, { t: 5000, type: 'stderr', message: 'retrying' }])).toBe(5000);
    const ended = {
      t: 9000,
      dir: 'in',
      message: { jsonrpc: '2.0', id: 3, result: { stopReason: 'end_turn' } },
    };
    expect(quietSince([prompt, ended])).toBeNull();
    expect(quietSince([])).toBeNull();
    expect(quietSince([{ dir: 'in' }])).toBeNull();
  });
  it('says nothing for 30 s, then how long', () => {
    expect(silenceLine(1000, 1000 + 29_999)).toBeNull();
    expect(silenceLine(1000, 1000 + 30_000)).toBe('  (no output from the agent for 30 s)');
    expect(silenceLine(1000, 1000 + 95_500)).toBe('  (no output from the agent for 95 s)');
    expect(silenceLine(null, 1e12)).toBeNull();
  });
});
