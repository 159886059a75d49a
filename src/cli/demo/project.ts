// The small project `ii demo` puts in its throwaway repository: a text helper
// library with its own tests (node --test), and a known bug for a todo to fix.

export const DEMO_FILES: Record<string, string> = {
  'package.json': JSON.stringify(
    { name: 'textkit', version: '1.0.0', type: 'module', private: true, scripts: { test: 'node --test' } },
    null,
    2,
  ),
  'README.md': '# textkit\n\nSmall text helpers. Run the tests with `npm test`.\n',
  '.gitignore': 'node_modules/\n',
  'truncate.js': `// Shortens text to at most \`max\` characters, ending with an ellipsis.
export function truncate(text, max) {
  if (text.length <= max) return text;
  return text.slice(0, max) + '…';
}
`,
  'truncate.test.js': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { truncate } from './truncate.js';

test('short text is unchanged', () => {
  assert.equal(truncate('hello', 10), 'hello');
});
`,
  'incrementum.toml': `# incrementum configuration of the demo repository.
[agent]
preset = "scripted"

[job]
test-commands = ["node --test"]
max-iterations = 4
max-changes = 3

[run]
jobs = 3
# Each todo is tried once: the abandoned one stays blocked on the board.
max-attempts = 1
`,
};
