// The demo's todos and the scripted agent's script for each: one per path a
// job can take (accepted first time, changes requested then accepted, tests
// failing then fixed, abandoned). Pure data; `pace` stretches the agent's
// turns so a person watching the dashboard sees the cards move.
import type { JobStatus } from '../../model/job.js';

export interface DemoTodo {
  title: string;
  description: string;
  type: 'task' | 'bug' | 'feature' | 'chore';
  priority: number;
  /** What the demo shows with it, for the summary. */
  path: string;
  expected: JobStatus;
  /** The scripted agent's scenario (see src/agent/scripted/scenario.ts). */
  scenario: (pace: number) => Record<string, unknown>;
}

const think = (pace: number, ms: number) => (pace > 0 ? [{ type: 'delay', ms: Math.round(ms * pace) }] : []);
const turn = (pace: number, actions: unknown[], input = 1800, output = 420) => ({
  actions: [...think(pace, 1500), ...actions],
  usage: { input_tokens: input, output_tokens: output, cost: (input * 3 + output * 15) / 1e6 },
});
const verdict = (pace: number, v: 'ACCEPT' | 'REQUEST_CHANGES' | 'ABANDON', text: string) =>
  turn(
    pace,
    [
      { type: 'message', text },
      { type: 'feedback', verdict: v, text },
    ],
    2400,
    120,
  );
const message = (pace: number, text: string) => turn(pace, [{ type: 'commit_message', text }], 900, 60);
/** Auto-commit turns, one per iteration: the drafts a real agent would write, shown in the history. */
const commits = (pace: number, ...messages: string[]) =>
  messages.map((m) => turn(pace, [{ type: 'git_commit', message: m }], 700, 40));

const WORDCOUNT = `// Counts the words in a text: runs of non-space characters.
export function wordCount(text) {
  const words = text.trim().split(/\\s+/);
  return words[0] === '' ? 0 : words.length;
}
`;
const WORDCOUNT_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wordCount } from './wordcount.js';

test('counts words separated by any whitespace', () => {
  assert.equal(wordCount('one two\\tthree\\nfour'), 4);
});

test('an empty or blank text has no words', () => {
  assert.equal(wordCount(''), 0);
  assert.equal(wordCount('   '), 0);
});
`;

const SLUGIFY_BUGGY = `// Turns a title into a URL slug.
export function slugify(title) {
  return title.toLowerCase().replace(' ', '-');
}
`;
const SLUGIFY_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slugify } from './slugify.js';

test('lowercases and joins words with dashes', () => {
  assert.equal(slugify('Hello Big World'), 'hello-big-world');
});

test('drops punctuation', () => {
  assert.equal(slugify('Ready, set: go!'), 'ready-set-go');
});
`;
const SLUGIFY_FIXED = `// Turns a title into a URL slug: lowercase words joined by single dashes.
export function slugify(title) {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
`;

export const DEMO_TODOS: DemoTodo[] = [
  {
    title: 'Add a wordCount helper',
    description: 'Add wordCount(text) in wordcount.js, counting runs of non-space characters, with tests.',
    type: 'feature',
    priority: 2,
    path: 'accepted the first time',
    expected: 'completed',
    scenario: (pace) => ({
      implement: [
        turn(pace, [
          { type: 'message', text: 'Adding wordcount.js and its tests.' },
          { type: 'write', path: 'wordcount.js', content: WORDCOUNT },
          { type: 'write', path: 'wordcount.test.js', content: WORDCOUNT_TEST },
        ]),
      ],
      'auto-commit': commits(pace, 'feat: add wordCount(text) with tests'),
      review: [verdict(pace, 'ACCEPT', 'Small, clear, tested. Accepted.')],
      'commit-message': [
        message(pace, 'Add wordCount(text)\n\nCounts runs of non-space characters; blank text has none.'),
      ],
      'project-review': [verdict(pace, 'ACCEPT', 'The todo is done.')],
    }),
  },
  {
    title: 'truncate returns one character too many',
    description:
      'truncate(text, max) returns max + 1 characters when it adds the ellipsis; it must return at most max.',
    type: 'bug',
    priority: 1,
    path: 'changes requested, then accepted',
    expected: 'completed',
    scenario: (pace) => ({
      implement: [
        turn(pace, [
          { type: 'message', text: 'The ellipsis is not counted: keep max - 1 characters before it.' },
          { type: 'edit', path: 'truncate.js', old: 'text.slice(0, max)', new: 'text.slice(0, max - 1)' },
        ]),
        turn(pace, [
          { type: 'message', text: 'Adding the test the review asked for.' },
          {
            type: 'edit',
            path: 'truncate.test.js',
            old: "  assert.equal(truncate('hello', 10), 'hello');\n});\n",
            new: "  assert.equal(truncate('hello', 10), 'hello');\n});\n\ntest('long text is cut to exactly max characters, ellipsis included', () => {\n  assert.equal(truncate('hello world', 6), 'hello…');\n  assert.equal(truncate('hello world', 6).length, 6);\n});\n",
          },
        ]),
      ],
      'auto-commit': commits(
        pace,
        'fix: count the ellipsis in truncate max',
        'test: a truncated text is exactly max characters',
      ),
      review: [
        verdict(
          pace,
          'REQUEST_CHANGES',
          'The fix is right, but nothing tests it: add a test that a truncated text is exactly max characters long.',
        ),
        verdict(pace, 'ACCEPT', 'Fixed and covered by a test.'),
      ],
      'commit-message': [
        message(pace, 'truncate: count the ellipsis in max\n\nIt returned max + 1 characters.'),
      ],
      'project-review': [verdict(pace, 'ACCEPT', 'The bug is fixed.')],
    }),
  },
  {
    title: 'Add slugify for titles',
    description: 'slugify(title): lowercase words joined by single dashes, punctuation dropped.',
    type: 'feature',
    priority: 2,
    path: 'tests failing, then fixed',
    expected: 'completed',
    scenario: (pace) => ({
      implement: [
        turn(pace, [
          { type: 'write', path: 'slugify.js', content: SLUGIFY_BUGGY },
          { type: 'write', path: 'slugify.test.js', content: SLUGIFY_TEST },
        ]),
        turn(pace, [
          {
            type: 'message',
            text: 'replace() with a string only replaces the first space; using a regular expression.',
          },
          { type: 'write', path: 'slugify.js', content: SLUGIFY_FIXED },
        ]),
      ],
      'auto-commit': commits(
        pace,
        'feat: add slugify(title) with tests',
        'fix: slugify replaces every run of spaces and punctuation',
      ),
      review: [verdict(pace, 'ACCEPT', 'Tests pass and cover punctuation.')],
      'commit-message': [message(pace, 'Add slugify(title)')],
      'project-review': [verdict(pace, 'ACCEPT', 'Done.')],
    }),
  },
  {
    title: 'Rewrite textkit in Rust',
    description: 'Port the library to Rust for speed.',
    type: 'chore',
    priority: 4,
    path: 'abandoned by the reviewer',
    expected: 'abandoned',
    scenario: (pace) => ({
      implement: [
        turn(pace, [
          { type: 'message', text: 'Starting a Cargo project next to the JavaScript one.' },
          {
            type: 'write',
            path: 'rust/Cargo.toml',
            content: '[package]\nname = "textkit"\nversion = "0.1.0"\n',
          },
        ]),
      ],
      'auto-commit': commits(pace, 'chore: start a Cargo project for textkit'),
      review: [
        verdict(
          pace,
          'ABANDON',
          'A second implementation in another language is out of scope for a three-function library; nothing needs the speed.',
        ),
      ],
    }),
  },
];
