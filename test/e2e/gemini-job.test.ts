// `ii job do` with the real `gemini --acp` (Gemini CLI) as its agent, offline:
// a scripted model server speaks the Gemini API, and gemini-cli's own
// write_file and replace tools create one file, edit another, leave the
// review's verdict in .incrementum-feedback and the commit message in
// .incrementum-commit-message. Its write_file reads its target through
// fs/read_text_file first, so creating a file needs the client's answer for a
// missing one to be right. Skipped only when the npm registry cannot be
// reached to install @google/gemini-cli.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom } from '../helpers/job.js';
import { jobModel, type ModelServer, type Step } from '../helpers/model-server.js';
import { runningIn } from '../helpers/procs.js';
import { agentToml, ensureAgent, GEMINI, geminiHome, titleFor } from '../helpers/real-agents.js';
import { waitFor } from '../helpers/tmp.js';

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

let f: JobFixture | null = null;
let model: ModelServer | null = null;
afterEach(async () => {
  await model?.close();
  f?.cleanup();
  f = model = null;
});

describe.skipIf('skip' in gemini)(
  titleFor('ii job do with the real gemini --acp (scripted model)', gemini),
  () => {
    it(
      'creates a file and edits another; the verdicts and the commit message come through its own tools',
      { timeout: 300_000 },
      async () => {
        const fx = (f = new JobFixture('ii-gemjob-'));
        const m = (model = await jobModel('gemini', {
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
              writeFile('.incrementum-commit-message', 'feat: say hello\n\nThe todo asks for a greeting.\n'),
              { text: 'Written.' },
            ],
          ],
          'project-review': [feedback('ACCEPT\n\nAll done.\n')],
        }));
        const env = geminiHome(join(fx.tmp.path, 'gemini-home'), m.url);
        // The tests check the agent's work, so they fail on the untouched base.
        fx.setup(['grep -q hi hello.txt', 'grep -q "Says hello" README.md'], {
          job: 'baseline-tests = false\n',
          agent: agentToml('gemini', (gemini as { bin: string }).bin, env),
        });
        const r = await fx.runAsync(['job', 'do', '--title', 'say hello']);
        expect(r.stderr).toContain('completed');
        expect(r.code).toBe(0);
        const job = fx.show(jobIdFrom(r.stderr));
        expect(job.status).toBe('completed');
        const [c] = job.changes[0]!.commits;
        expect(c!.files.map((x) => x.path).sort()).toEqual(['README.md', 'hello.txt']);
        expect(c!.tests_passed).toBe(true);
        expect(c!.review).toMatchObject({ outcome: 'ACCEPT', comments: 'Looks right.' });
        // Its comments prove the verdict was written (a missing file counts as ACCEPT).
        expect(job.project_review).toMatchObject({ outcome: 'ACCEPT', comments: 'All done.' });
        expect(m.sessions).toEqual({ implement: 2, review: 1, 'commit-message': 1, 'project-review': 1 });
        // Every tool call of every session worked: none failed, the new file's least of all.
        for (const a of job.agent_sessions)
          expect(readFileSync(a.transcript, 'utf8')).not.toContain('"status":"failed"');
        const sha = r.stdout.trim();
        const msg = fx.git('log', '-1', '--format=%B', sha);
        expect(msg).toContain('feat: say hello');
        expect(msg).toContain('The todo asks for a greeting.');
        expect(fx.git('show', `${sha}:hello.txt`)).toBe('hi\n');
        expect(fx.git('show', `${sha}:README.md`)).toBe('# r\n\nSays hello.\n');
        expect(fx.git('ls-tree', '-r', '--name-only', sha)).not.toContain('.incrementum-');
        await waitFor(() => runningIn(fx.tmp.path).length === 0, 'no gemini left');
      },
    );
  },
);
