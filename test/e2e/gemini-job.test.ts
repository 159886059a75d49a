// `ii job do` with the real `gemini --acp` (Gemini CLI) as its agent, offline:
// a scripted model server speaks the Gemini API, and gemini-cli's own
// write_file and replace tools create one file, edit another, leave the
// review's verdict in .incrementum-feedback and the commit message in
// .incrementum-commit-message. Its write_file reads its target through
// fs/read_text_file first, so creating a file needs the client's answer for a
// missing one to be right. Skipped only when the npm registry cannot be
// reached to install @google/gemini-cli.
import { describe, it } from 'vitest';
import type { Step } from '../helpers/model-server.js';
import { expectHelloJob, HELLO_TESTS, realAgentJobs } from '../helpers/real-agent-job.js';
import { ensureAgent, GEMINI, geminiHome, titleFor } from '../helpers/real-agents.js';

const gemini = ensureAgent(GEMINI);

const writeFile = (path: string, content: string): Step => ({
  tool: 'write_file',
  args: { file_path: `$WS/${path}`, content },
});
const replace = (path: string, from: string, to: string): Step => ({
  tool: 'replace',
  args: {
    file_path: `$WS/${path}`,
    old_string: from,
    new_string: to,
    instruction: `Change ${from} to ${to}.`,
  },
});
const feedback = (text: string): Step[] => [writeFile('.incrementum-feedback', text), { text: 'Reviewed.' }];

const jobs = realAgentJobs({ preset: 'gemini', installed: gemini, home: geminiHome }, 'gemini', 'ii-gemjob-');

describe.skipIf('skip' in gemini)(
  titleFor('ii job do with the real gemini --acp (scripted model)', gemini),
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
                replace('README.md', '# r', '# r\n\nSays hello.'),
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
        await expectHelloJob(fx, model, 'gemini');
      },
    );
  },
);
