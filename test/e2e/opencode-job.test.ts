// `ii job do` with the real `opencode acp` as its agent, offline: a scripted
// model server plays the model, and opencode's own write and edit tools make
// the change, leave the review's verdict in .incrementum-feedback and the
// commit message in .incrementum-commit-message. Skipped like
// opencode.test.ts only when the npm registry cannot be reached.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jobIdFrom, promptsSent } from '../helpers/job.js';
import type { Step } from '../helpers/model-server.js';
import { runningIn } from '../helpers/procs.js';
import { realAgentJobs } from '../helpers/real-agent-job.js';
import { ensureAgent, OPENCODE, opencodeHome, titleFor } from '../helpers/real-agents.js';
import { waitFor } from '../helpers/tmp.js';

const oc = ensureAgent(OPENCODE);

const writeFile = (path: string, content: string): Step => ({
  tool: 'write',
  args: { filePath: `$WS/${path}`, content },
});
const feedback = (text: string): Step[] => [writeFile('.incrementum-feedback', text), { text: 'Reviewed.' }];
const commitMessage = (text: string): Step[] => [
  writeFile('.incrementum-commit-message', text),
  { text: 'Written.' },
];

const jobs = realAgentJobs({ preset: 'opencode', installed: oc, home: opencodeHome }, 'openai', 'ii-ocjob-');

describe.skipIf('skip' in oc)(titleFor('ii job do with the real opencode acp (scripted model)', oc), () => {
  it(
    'accepted the first time: the change, the review verdict and the commit message all come through opencode',
    { timeout: 300_000 },
    async () => {
      const { fx, model: m } = await jobs.start(
        {
          implement: [[writeFile('hello.txt', 'hi\n'), { text: 'Created hello.txt.' }]],
          review: [feedback('ACCEPT\n\nLooks right.\n')],
          'commit-message': [commitMessage('feat: say hello\n\nThe todo asks for a greeting file.\n')],
          'project-review': [feedback('ACCEPT\n\nAll done.\n')],
        },
        ['grep -q hi hello.txt'],
      );
      const r = await fx.runAsync(['job', 'do', '--title', 'say hello']);
      expect(r.stderr).toContain('completed');
      expect(r.code).toBe(0);
      const job = fx.show(jobIdFrom(r.stderr));
      expect(job.status).toBe('completed');
      expect(job.changes.map((x) => x.commits.length > 0)).toEqual([true, false]); // the last pass found nothing to change
      const [c] = job.changes[0]!.commits;
      expect(c!.files.map((x) => x.path)).toEqual(['hello.txt']);
      expect(c!.tests_passed).toBe(true);
      expect(c!.review).toMatchObject({ outcome: 'ACCEPT', comments: 'Looks right.' });
      // Its comments prove the verdict was written (a missing file counts as ACCEPT).
      expect(job.project_review).toMatchObject({ outcome: 'ACCEPT', comments: 'All done.' });
      expect(job.agent_sessions.map((a) => a.purpose)).toEqual([
        'implement',
        'review',
        'commit-message',
        'implement',
        'project-review',
      ]);
      expect(m.sessions).toEqual({ implement: 2, review: 1, 'commit-message': 1, 'project-review': 1 });
      const sha = r.stdout.trim();
      const msg = fx.git('log', '-1', '--format=%B', sha);
      expect(msg).toContain('feat: say hello');
      expect(msg).toContain('The todo asks for a greeting file.');
      expect(msg).toContain(`Change-Id: ${job.changes[0]!.change_id}`);
      expect(fx.git('show', `${sha}:hello.txt`)).toBe('hi\n');
      expect(fx.git('ls-tree', '-r', '--name-only', sha)).not.toContain('.incrementum-');
      await waitFor(() => runningIn(fx.tmp.path).length === 0, 'no opencode left');
    },
  );

  it(
    'changes requested: opencode edits the file in a second iteration with the review comments',
    { timeout: 300_000 },
    async () => {
      const { fx } = await jobs.start(
        {
          implement: [
            [writeFile('a.txt', 'one\n'), { text: 'Wrote a.txt.' }],
            [
              { tool: 'edit', args: { filePath: '$WS/a.txt', oldString: 'one', newString: 'one\ntwo' } },
              { text: 'Added the second line.' },
            ],
          ],
          review: [
            feedback('REQUEST_CHANGES\n\nNeeds a second line.\n\nAdd "two" to a.txt.\n'),
            feedback('ACCEPT\n\nGood now.\n'),
          ],
          'commit-message': [commitMessage('feat: two lines in a.txt\n')],
          'project-review': [feedback('ACCEPT\n\nAll done.\n')],
        },
        ['test -f a.txt'],
      );
      const r = await fx.runAsync(['job', 'do', '--title', 'two lines']);
      expect(r.code).toBe(0);
      const job = fx.show(jobIdFrom(r.stderr));
      expect(job.changes.map((x) => x.commits.length > 0)).toEqual([true, false]); // the last pass found nothing to change
      const commits = job.changes[0]!.commits;
      expect(commits).toHaveLength(2);
      expect(commits[0]!.review).toMatchObject({
        outcome: 'REQUEST_CHANGES',
        comments: 'Needs a second line.\n\nAdd "two" to a.txt.',
      });
      expect(commits[1]!.feedback).toContain('Add "two" to a.txt.');
      expect(commits[1]!.files.map((x) => x.path)).toEqual(['a.txt']);
      expect(commits[1]!.review?.outcome).toBe('ACCEPT');
      expect(job.project_review).toMatchObject({ outcome: 'ACCEPT', comments: 'All done.' });
      // opencode was given the comments in its second implement prompt.
      const implement = job.agent_sessions.filter((a) => a.purpose === 'implement');
      expect(promptsSent(implement[1]!.transcript).join('\n')).toContain('Add "two" to a.txt.');
      expect(readFileSync(implement[1]!.transcript, 'utf8')).toContain('a.txt');
      const sha = r.stdout.trim();
      expect(fx.git('show', `${sha}:a.txt`)).toBe('one\ntwo\n');
      expect(fx.git('log', '-1', '--format=%B', sha)).toContain('feat: two lines in a.txt');
      const d = fx.run(['job', 'diff', job.id, '--iteration', '2']);
      expect(d.stdout).toContain('+two');
      await waitFor(() => runningIn(fx.tmp.path).length === 0, 'no opencode left');
    },
  );
});
