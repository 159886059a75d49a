import { describe, expect, it } from 'vitest';
import { REDACTED, redact } from '../../src/journal/redact.js';

// Built by concatenation so the fixtures themselves never look like live keys to a scanner.
const k = (...parts: string[]) => parts.join('');

describe('redact: each secret shape', () => {
  const cases: [string, string, string][] = [
    ['OpenAI key', `OPENAI says ${k('sk-', 'proj-', 'abcDEF1234567890abcdef12345')} ok`, 'sk-proj-abc'],
    ['OpenAI legacy key', `key ${k('sk-', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6')}`, 'sk-A1b2'],
    [
      'Anthropic key',
      `using ${k('sk-ant-', 'api03-', 'abcdefghijklmnopqrstuvwx_yz-0123456789')}`,
      'sk-ant-api03',
    ],
    ['Google API key', `url?key=x&k=${k('AIza', 'SyA-1234567890abcdefghijklmnopqrstu')}`, 'AIzaSyA'],
    ['GitHub classic token', `git clone ${k('ghp_', 'abcdefghijklmnopqrstuvwxyz0123456789')}`, 'ghp_abc'],
    ['GitHub OAuth token', `${k('gho_', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}`, 'gho_ABC'],
    [
      'GitHub fine-grained token',
      `${k('github_pat_', '11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz')}`,
      'github_pat_11',
    ],
    ['Slack token', `SLACK=${k('xoxb-', '1234567890-0987654321-AbCdEfGhIjKl')}`, 'xoxb-12345'],
    ['Stripe live key', `charge with ${k('sk_live_', '51AbCdEfGhIjKlMnOpQrStUv')}`, 'sk_live_51'],
    ['AWS access key id', `aws_access_key_id ${k('AKIA', 'IOSFODNN7EXAMPLE')} region`, 'AKIAIOSFODNN7'],
    ['bearer token', 'curl -H "Authorization: Bearer abc.def-ghi_jkl~mno+pqr/stu="', 'abc.def-ghi'],
    ['password assignment', 'connect --password=hunter2hunter2 --user=bob', 'hunter2'],
    ['token assignment', 'GITHUB_TOKEN=abc123secretvalue npm publish', 'abc123secret'],
    ['secret assignment', 'CLIENT_SECRET=s3cr3t-v4lu3 ./run', 's3cr3t'],
    ['api_key in a query string', 'GET /v1?api_key=0123456789abcdef&page=2', '0123456789abcdef'],
    ['quoted assignment', 'password = "correct horse battery"', 'correct horse'],
    ['JSON key', '{"api_key": "zzz-top-secret-zzz", "name": "x"}', 'top-secret'],
    ['URL credentials', 'remote https://bob:pa55word@example.com/repo.git', 'pa55word'],
  ];
  for (const [name, input, leaked] of cases)
    it(name, () => {
      const out = redact(input);
      expect(out).not.toContain(leaked);
      expect(out).toContain(REDACTED);
    });

  it('a private key block, whole', () => {
    const body =
      'MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naFDrBz9vFqU4yQIDAQABAoIBAQC6\n';
    const input = `before\n-----BEGIN RSA PRIVATE KEY-----\n${body}-----END RSA PRIVATE KEY-----\nafter`;
    const out = redact(input);
    expect(out).not.toContain('MIIEow');
    expect(out).toContain(
      'before\n-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n-----END RSA PRIVATE KEY-----\nafter',
    );
  });

  it('a private key block cut off before its end line', () => {
    const out = redact(
      'x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAA',
    );
    expect(out).not.toContain('b3BlbnNz');
    expect(out.startsWith('x\n-----BEGIN OPENSSH PRIVATE KEY-----')).toBe(true);
  });

  it('keeps the key name of an assignment, so the output still reads', () => {
    expect(redact('DB_PASSWORD=hunter2')).toBe(`DB_PASSWORD=${REDACTED}`);
    expect(redact('Authorization: Bearer abcdefghijklmnop')).toBe(`Authorization: Bearer ${REDACTED}`);
  });

  it('is idempotent', () => {
    const once = redact(`token=abc ${k('sk-ant-', 'abcdefghijklmnopqrstuvwxyz')} password = "x y"`);
    expect(redact(once)).toBe(once);
  });
});

describe('redact: ordinary text is untouched', () => {
  const ordinary = [
    'FAIL test/unit/foo.test.ts > adds numbers\nAssertionError: expected 3 to be 4',
    "SyntaxError: Unexpected token: '}' at line 3",
    'const token = getToken(); if (token == null) return;',
    'if (password !== "") check(password)',
    'max_tokens=4096 input_tokens=12 tokens=5',
    'passwordless login; the secret sauce; tokenizer ready',
    'see https://example.com/path?page=2&sort=asc',
    'git log --format=%H|%ct|%s 1a2b3c4d..5e6f7a8b',
    'sk-learn is not scikit-learn; task-1234 done; risk_live demo',
    'npm ERR! code ELIFECYCLE\n    at Object.<anonymous> (/repo/src/index.ts:12:5)',
    'AKIA alone, and AKIAshort',
    '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
    '',
    'unicode: naïve café 日本語 ✓',
  ];
  for (const text of ordinary) it(JSON.stringify(text.slice(0, 40)), () => expect(redact(text)).toBe(text));
});
