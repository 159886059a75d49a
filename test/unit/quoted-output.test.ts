// Agent output quoted in errors: every control character shown, none acted on.
import { describe, expect, it } from 'vitest';
import { quotedOutput } from '../../src/agent/quoted-output.js';

describe('quotedOutput', () => {
  it('quotes the text on one line, control characters escaped', () => {
    expect(quotedOutput('plain')).toBe('"plain"');
    expect(quotedOutput('\x1b[2J\x1b[31mred\x1b[0m\r\n\t\x00\x7f\x9b')).toBe(
      '"\\x1b[2J\\x1b[31mred\\x1b[0m\\r\\n\\t\\x00\\x7f\\u009b"',
    );
    expect(quotedOutput('héllo — ✓')).toBe('"héllo — ✓"');
  });

  it('keeps the first characters only, never splitting one', () => {
    expect(quotedOutput('abcdef', 3)).toBe('"abc…"');
    expect(quotedOutput('abc', 3)).toBe('"abc"');
    expect(quotedOutput('😀😀😀', 2)).toBe('"😀😀…"');
  });

  it('redacts a secret before cutting, so a cut one is not half shown', () => {
    const out = quotedOutput('ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789', 30);
    expect(out).not.toContain('sk-ant-api03-abc');
    expect(out).toContain('[REDACTED]');
  });
});
