// `ii job do` with the real Claude Code (`claude-agent-acp`) as its agent,
// offline: a scripted model server speaks the Anthropic Messages API, and
// Claude Code's own Write, Read and Edit tools create one file, edit another,
// leave the review's verdict in .incrementum-feedback and the commit message
// in .incrementum-commit-message. Skipped only when the npm registry cannot be
// reached to install @agentclientprotocol/claude-agent-acp.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom } from '../helpers/job.js';
import { jobModel, type ModelServer, type Step } from '../helpers/model-server.js';
import { runningIn } from '../helpers/procs.js';
import { agentToml, ensureAgent, CLAUDE, claudeHome, titleFor } from '../helpers/real-agents.js';
import { waitFor } from '../helpers/tmp.js';

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

let f: JobFixture | null = null;
let model: ModelServer | null = null;
afterEach(async () => {
  await model?.close();
  f?.cleanup();
  f = model = null;
});

describe.skipIf('skip' in claude)(
  titleFor('ii job do with the real Claude Code, claude-agent-acp (scripted model)', claude),
  () => {
    it(
      'creates a file and edits another; the verdicts and the commit message come through its own tools',
      { timeout: 300_000 },
      async () => {
        const fx = (f = new JobFixture('ii-claudejob-'));
        const m = (model = await jobModel('anthropic', {
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
              writeFile('.incrementum-commit-message', 'feat: say hello\n\nThe todo asks for a greeting.\n'),
              { text: 'Written.' },
            ],
          ],
          'project-review': [feedback('ACCEPT\n\nAll done.\n')],
        }));
        const env = claudeHome(join(fx.tmp.path, 'claude-home'), m.url);
        // The tests check the agent's work, so they fail on the untouched base.
        fx.setup(['grep -q hi hello.txt', 'grep -q "Says hello" README.md'], {
          job: 'baseline-tests = false\n',
          agent: agentToml('claude', (claude as { bin: string }).bin, env),
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
        // Every tool call of every session worked.
        for (const a of job.agent_sessions)
          expect(readFileSync(a.transcript, 'utf8')).not.toContain('"status":"failed"');
        const sha = r.stdout.trim();
        const msg = fx.git('log', '-1', '--format=%B', sha);
        expect(msg).toContain('feat: say hello');
        expect(msg).toContain('The todo asks for a greeting.');
        expect(fx.git('show', `${sha}:hello.txt`)).toBe('hi\n');
        expect(fx.git('show', `${sha}:README.md`)).toBe('# r\n\nSays hello.\n');
        expect(fx.git('ls-tree', '-r', '--name-only', sha)).not.toContain('.incrementum-');
        await waitFor(() => runningIn(fx.tmp.path).length === 0, 'no Claude Code left');
      },
    );
  },
);
