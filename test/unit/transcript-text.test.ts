import { describe, expect, it } from 'vitest';
import { transcriptText } from '../../src/job/transcript-text.js';

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
});
