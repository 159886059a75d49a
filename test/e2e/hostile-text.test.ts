// What an agent or a test prints never takes over the user's terminal, and
// its secrets are never shown: a real job whose agent messages, review
// comments, commit messages, file names, test output and todo title carry
// ESC[2J, an OSC title, a C1 CSI, BEL and a bare CR, plus secrets, run by
// the built CLI; then every command that shows it, text and --json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFrom, JobFixture, verdict, write } from '../helpers/job.js';
import {
  CONTROLS,
  expectNoControl,
  expectNoSecret,
  HOSTILE,
  NEAR_MISSES,
  SECRET_TEXT,
  SHOWN_BIDI,
  SHOWN_CLEAR,
  SHOWN_INVISIBLE,
} from '../helpers/hostile.js';

const EVIL_NAME = `evil\nname${CONTROLS.clear}.txt`;
const SAY = `${HOSTILE}\n${SECRET_TEXT}\n${NEAR_MISSES.join('\n')}`;
// printf turns the octal escapes into the raw bytes: ESC[2J, an OSC title, C1 CSI (UTF-8), BEL, CR.
const NOISY_TEST = String.raw`if [ -f fail.txt ]; then printf 'out \033[2J\033]0;t\007 \302\233x bell\007 ok\rFORGED\nMY_API_KEY=plainvalue42\n'; exit 1; fi`;

// Two file names that are not UTF-8 (bad-<0xff>.txt, bad-<0xfe>.txt) and a Latin-1 line in one.
const NOT_UTF8_FILES = String.raw`printf 'x\n' > "$(printf 'bad-\377.txt')" && printf 'caf\351\n' > "$(printf 'bad-\376.txt')"`;

let fx: JobFixture;
let jobId = '';
let jobDo = { code: 0, stdout: '', stderr: '' };
const outputs = new Map<string, ReturnType<JobFixture['run']>>();
const todoId = () =>
  (JSON.parse(ii(['job', 'show', '<id>', '--json']).stdout) as { todo_id: string }).todo_id;
/** `ii <args>` with <id> for the job and <todo> for its todo, each command run once for all the checks. */
const ii = (args: string[]) => {
  const key = args.join(' ');
  let r = outputs.get(key);
  if (!r)
    outputs.set(key, (r = fx.run(args.map((a) => (a === '<id>' ? jobId : a === '<todo>' ? todoId() : a)))));
  return r;
};

beforeAll(() => {
  fx = new JobFixture('ii-hostile-');
  fx.setup([NOISY_TEST]);
  const s = fx.scenario('hostile', {
    implement: [
      {
        actions: [
          { type: 'plan', entries: [HOSTILE] },
          { type: 'thought', text: SAY },
          { type: 'message', text: SAY },
          write(EVIL_NAME, `${SAY}\n`),
          write('a.txt', `${HOSTILE}\n`),
          write(CONTROLS.bidi, 'x\n'),
          { type: 'shell', command: NOT_UTF8_FILES },
          { type: 'commit_message', text: `feat: ${HOSTILE}\n\n${SECRET_TEXT}` },
        ],
      },
      { actions: [write('fail.txt', 'x\n'), { type: 'message', text: SAY }] },
      { actions: [{ type: 'delete', path: 'fail.txt' }] },
    ],
    review: [verdict('REQUEST_CHANGES', SAY), verdict('ACCEPT', SAY)],
    'project-review': [verdict('ACCEPT', SAY)],
    'commit-message': [
      { actions: [{ type: 'commit_message', text: `final: ${HOSTILE}\n\n${SECRET_TEXT}` }] },
    ],
  });
  jobDo = fx.run(['job', 'do', '--title', `title ${HOSTILE} MY_API_KEY=plainvalue42`], s);
  jobId = jobIdFrom(jobDo.stderr);
});
afterAll(() => fx.cleanup());

describe('agent and test text on the terminal', () => {
  it('the job ran through review, failing tests and the project review', () => {
    expect(jobDo.code, jobDo.stderr).toBe(0);
    const job = fx.show(jobId);
    expect(job.status).toBe('completed');
    const commits = job.changes[0]!.commits;
    expect(commits.map((c) => c.tests_passed)).toEqual([true, false, true]);
    // The record keeps what the agent wrote; only what is shown is escaped.
    expect(commits[0]!.review?.comments).toContain(CONTROLS.clear);
  });

  it('ii job do shows no control character and no secret', () => {
    const out = jobDo.stdout + jobDo.stderr;
    expectNoControl(out, 'ii job do');
    expectNoSecret(out, 'ii job do');
    expect(jobDo.stderr).toContain(`review: REQUEST_CHANGES — hostile ${SHOWN_CLEAR}`);
    expect(jobDo.stderr).toContain('evil\\nname\\x1b[2J.txt');
  });

  const commands: [string, string[]][] = [
    ['ii job show', ['job', 'show', '<id>']],
    ['ii job show --json', ['job', 'show', '<id>', '--json']],
    ['ii job logs', ['job', 'logs', '<id>']],
    ['ii job logs --json', ['job', 'logs', '<id>', '--json']],
    ['ii job diff', ['job', 'diff', '<id>', '--iteration', '1']],
    ['ii job diff --json', ['job', 'diff', '<id>', '--iteration', '1', '--json']],
    ['ii job list', ['job', 'list', '--all']],
    ['ii job list --json', ['job', 'list', '--all', '--json']],
    ['ii todo list', ['todo', 'list']],
    ['ii todo list --json', ['todo', 'list', '--json']],
    ['ii job journal', ['job', 'journal', '<id>']],
    ['ii job journal --json', ['job', 'journal', '<id>', '--json']],
  ];
  for (const [name, args] of commands)
    it(`${name} shows no control character`, () => {
      const r = ii(args);
      expect(r.code, r.stderr).toBe(0);
      expectNoControl(r.stdout + r.stderr, name);
      if (name.endsWith('--json')) JSON.parse(r.stdout.trim().split('\n')[0]!);
    });

  it('shows the sequences escaped, not dropped', () => {
    const show = ii(['job', 'show', '<id>']).stdout;
    expect(show).toContain(
      `hostile ${SHOWN_CLEAR}\\x1b]0;pwned-title\\x07 c1 \\u009b31m bell\\x07 ok\\rFORGED`,
    );
    const diff = ii(['job', 'diff', '<id>', '--iteration', '1']).stdout;
    expect(diff).toContain(SHOWN_CLEAR);
    // The JSON keeps the value: it parses back to the raw text.
    const json = ii(['job', 'show', '<id>', '--json']).stdout;
    expect(json).toContain('\\u001b[2J');
    expect(json).toContain('\\u009b31m');
  });

  it('a file name with a newline stays on one line in ii job show and ii job diff', () => {
    const diff = ii(['job', 'diff', '<id>', '--iteration', '1']).stdout;
    expect(diff).toMatch(/^ {2}A evil\\nname\\x1b\[2J\.txt$/m);
  });
});

describe('bidi controls and zero-width characters', () => {
  // The title, the agent's words, a file's name and its contents carry an RLO
  // (`inv\u202etxt.exe` reads `invexe.txt`), zero-width characters and an isolate.
  const shownIn: [string, string[], string[]][] = [
    ['ii todo list', ['todo', 'list'], [SHOWN_BIDI]],
    ['ii job list', ['job', 'list', '--all'], [SHOWN_BIDI]],
    ['ii job logs', ['job', 'logs', '<id>'], [SHOWN_BIDI, SHOWN_INVISIBLE]],
    [
      'ii job diff',
      ['job', 'diff', '<id>', '--iteration', '1'],
      [`A ${SHOWN_BIDI}`, `+hostile`, SHOWN_INVISIBLE],
    ],
    ['ii job show', ['job', 'show', '<id>'], [SHOWN_BIDI, SHOWN_INVISIBLE]],
  ];
  for (const [name, args, shown] of shownIn)
    it(`${name} shows them as escapes`, () => {
      const r = ii(args);
      expect(r.code, r.stderr).toBe(0);
      for (const t of shown) expect(r.stdout, name).toContain(t);
    });

  const json: [string, string[]][] = [
    ['ii todo list --json', ['todo', 'list', '--json']],
    ['ii job list --json', ['job', 'list', '--all', '--json']],
    ['ii job logs --json', ['job', 'logs', '<id>', '--json']],
    ['ii job diff --json', ['job', 'diff', '<id>', '--iteration', '1', '--json']],
    ['ii job show --json', ['job', 'show', '<id>', '--json']],
  ];
  for (const [name, args] of json)
    it(`${name} writes them as \\u escapes that parse back to the raw text`, () => {
      const r = ii(args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(SHOWN_BIDI);
      const parsed = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.stringify(JSON.parse(l)))
        .join('\n');
      expect(parsed).toContain(JSON.stringify(CONTROLS.bidi).slice(1, -1));
    });
});

describe('file names that are not UTF-8', () => {
  it('ii job diff, logs and journal show their bytes escaped, so the two never look alike', () => {
    const diff = ii(['job', 'diff', '<id>', '--iteration', '1']).stdout;
    expect(diff).toMatch(/^ {2}A bad-\\xfe\.txt$/m);
    expect(diff).toMatch(/^ {2}A bad-\\xff\.txt$/m);
    expect(diff).toContain('+caf\\xe9');
    expect(ii(['job', 'logs', '<id>']).stdout).toContain('files: a.txt, bad-\\xfe.txt, bad-\\xff.txt,');
    const journal = ii(['job', 'journal', '<id>']).stdout;
    expect(journal).toContain('| bad-\\xfe.txt |');
    expect(journal).toContain('| bad-\\xff.txt |');
  });

  for (const [name, args] of [
    ['ii job diff --json', ['job', 'diff', '<id>', '--iteration', '1', '--json']],
    ['ii job show --json', ['job', 'show', '<id>', '--json']],
    ['ii job list --json', ['job', 'list', '--all', '--json']],
  ] as const)
    it(`${name} writes them as \\u escapes that parse back to two names`, () => {
      const out = ii([...args]).stdout;
      expect(out).toContain('bad-\\udcff.txt');
      expect(out).toContain('bad-\\udcfe.txt');
      const text = JSON.stringify(JSON.parse(out));
      expect(text).toContain(JSON.stringify('bad-\udcff.txt').slice(1, -1));
    });
});

describe('secrets from agents and tests', () => {
  const shown: [string, string[]][] = [
    ['ii job logs', ['job', 'logs', '<id>']],
    ['ii job logs --json', ['job', 'logs', '<id>', '--json']],
    ['ii job show', ['job', 'show', '<id>']],
    ['ii job show --json', ['job', 'show', '<id>', '--json']],
    ['ii job diff', ['job', 'diff', '<id>', '--iteration', '1']],
    ['ii job diff --json', ['job', 'diff', '<id>', '--iteration', '1', '--json']],
    ['ii job journal', ['job', 'journal', '<id>']],
    ['ii job journal --json', ['job', 'journal', '<id>', '--json']],
    ['ii job list --json', ['job', 'list', '--all', '--json']],
    ['ii todo list --json', ['todo', 'list', '--json']],
    ['ii todo show --json', ['todo', 'show', '<todo>', '--json']],
  ];
  for (const [name, args] of shown)
    it(`${name} shows none, and keeps the near misses`, () => {
      const r = ii(args);
      expect(r.code, r.stderr).toBe(0);
      expectNoSecret(r.stdout, name);
      expect(r.stdout).toContain('[REDACTED]');
      if (name.startsWith('ii job logs') || name.startsWith('ii job show'))
        for (const n of NEAR_MISSES) expect(r.stdout, name).toContain(n);
    });

  it('the journal excerpt of the failing test is redacted and escaped', () => {
    const md = ii(['job', 'journal', '<id>']).stdout;
    expect(md).toContain('MY_API_KEY=[REDACTED]');
    expect(md).toContain('\\x1b[2J');
  });
});
