// `ii job do` with the real Claude Code (`claude-agent-acp`) as its agent,
// offline: a scripted model server speaks the Anthropic Messages API, and
// Claude Code's own Write, Read and Edit tools create one file, edit another,
// leave the review's verdict in .incrementum-feedback and the commit message
// in .incrementum-commit-message. Skipped only when the npm registry cannot be
// reached to install @agentclientprotocol/claude-agent-acp.
import { describe, it } from 'vitest';
import type { Step } from '../helpers/model-server.js';
import { expectHelloJob, HELLO_TESTS, realAgentJobs } from '../helpers/real-agent-job.js';
import { ensureAgent, CLAUDE, claudeHome, titleFor } from '../helpers/real-agents.js';

const claude = ensureAgent(CLAUDE);

const writeFile = (path: string, content: string): Step => ({
  tool: 'Write',
  args: { file_path: `$WS/${path}`, content },
});
// Claude Code edits only a file it has read in the session.
const read = (path: string): Step => ({ tool: 'Read', args: { file_path: `$WS/${path}` } });
const edit = (path: string, from: string, to: string): Step => ({
  tool: 'Edit',
  args: { file_path: `$WS/${path}`, old_string: from, new_string: to },
});
const feedback = (text: string): Step[] => [writeFile('.incrementum-feedback', text), { text: 'Reviewed.' }];

const jobs = realAgentJobs(
  { preset: 'claude', installed: claude, home: claudeHome },
  'anthropic',
  'ii-claudejob-',
);

describe.skipIf('skip' in claude)(
  titleFor('ii job do with the real Claude Code, claude-agent-acp (scripted model)', claude),
  () => {
    it(
      'creates a file and edits another; the verdicts and the commit message come through its own tools',
      { timeout: 300_000 },
      async () => {
        const { fx, model } = await jobs.start(
          {
            implement: [
              [
                writeFile('hello.txt', 'hi\n'),
                read('README.md'),
                edit('README.md', '# r', '# r\n\nSays hello.'),
                { text: 'Done.' },
              ],
            ],
            review: [feedback('ACCEPT\n\nLooks right.\n')],
            'commit-message': [
              [
                writeFile(
                  '.incrementum-commit-message',
                  'feat: say hello\n\nThe todo asks for a greeting.\n',
                ),
                { text: 'Written.' },
              ],
            ],
            'project-review': [feedback('ACCEPT\n\nAll done.\n')],
          },
          HELLO_TESTS,
        );
        await expectHelloJob(fx, model, 'Claude Code');
      },
    );
  },
);
