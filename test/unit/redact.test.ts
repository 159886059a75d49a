import { describe, expect, it } from 'vitest';
import { redactJsonText } from '../../src/text/json.js';
import { REDACTED, redact, redactDeep } from '../../src/text/redact.js';

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
    [
      'npm token',
      `//registry.npmjs.org/:_authToken=${k('npm_', 'abcdefghijklmnopqrstuvwxyz0123456789')}`,
      'npm_abcdef',
    ],
    ['npm token alone', `using ${k('npm_', 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789')} now`, 'AbCdEfGh'],
    [
      'GitHub fine-grained token, full length',
      k(
        'github_pat_',
        '11AAAAAAA0aaaaaaaaaaaa_',
        'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',
      ),
      '11AAAAAAA0',
    ],
    [
      'GitLab token',
      `git remote add o https://x:${k('glpat-', 'aBcDeFgHiJkLmNoPqRsT')}@gitlab.com/x`,
      'aBcDeFgH',
    ],
    ['GitLab token alone', `PRIVATE ${k('glpat-', 'xyzXYZ0123456789abcd.01.0z1y2x3w4')} x`, 'xyzXYZ'],
    [
      'JWT',
      `id_token: ${k('eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9', '.', 'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ', '.', 'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c')}`,
      'SflKxwRJ',
    ],
    [
      'AWS secret key, credentials file',
      `aws_secret_access_key = ${k('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY')}`,
      'wJalrXUtn',
    ],
    [
      'AWS secret key, env dump',
      `AWS_SECRET_ACCESS_KEY=${k('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY')}`,
      'wJalrXUtn',
    ],
    [
      'AWS secret key, YAML',
      `aws_secret_access_key: "${k('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY')}"`,
      'wJalrXUtn',
    ],
    ['env dump _API_KEY', 'MY_API_KEY=abc', 'abc'],
    ['env dump _KEY', 'SIGNING_KEY=0f1e2d3c4b5a', '0f1e2d3c'],
    ['env dump _TOKEN', 'SENTRY_AUTH_TOKEN=sntrys_abcdef123', 'sntrys_'],
    ['env dump _SECRET', 'JWT_SECRET=supersecretvalue', 'supersecretvalue'],
    ['env dump _PASSWORD', 'export PGPASSWORD_X=1 DB_PASSWORD=hunter2', 'hunter2'],
    ['basic auth header', 'Authorization: Basic dXNlcjpwYXNzd29yZA==', 'dXNlcjpw'],
    ['API key header', 'curl -H "X-Api-Key: 0123456789abcdef0123" https://api', '0123456789abcdef'],
    ['GitLab private token header', 'PRIVATE-TOKEN: abcdefgh12345678', 'abcdefgh12345678'],
  ];
  for (const [name, input, leaked] of cases)
    it(name, () => {
      const out = redact(input);
      expect(out).not.toContain(leaked);
      expect(out).toContain(REDACTED);
    });

  it('a secret glued to a terminal escape sequence (colour, title, cursor), whatever ends the sequence', () => {
    const key = `sk-ant-${'a'.repeat(30)}`;
    for (const text of [
      `\x1b[31m${key}\x1b[0m`,
      `\x1b]0;${key}\x07`,
      `\x1b[2K${key}`,
      `token:\x1b[1m${key}`,
    ]) {
      const out = redact(text);
      expect(out, JSON.stringify(text)).not.toContain('aaaaaaaaaa');
      expect(out).toContain(REDACTED);
    }
    // What the rules saw whole is redacted as before: a PEM block in colour.
    const pem = `\x1b[33m-----BEGIN PRIVATE KEY-----\nMIIE\x1b[0mxyz\n-----END PRIVATE KEY-----`;
    expect(redact(pem)).not.toContain('MIIE');
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

  it('redacts the strings of a JSON value, keeping its keys and shape', () => {
    const v = { a: ['MY_API_KEY=abc', 3], b: { 'password=x': null, c: 'plain' } };
    expect(redactDeep(v)).toEqual({
      a: [`MY_API_KEY=${REDACTED}`, 3],
      b: { 'password=x': null, c: 'plain' },
    });
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
    // Near misses: code, configuration and output that only look like secrets.
    'const apiKey = process.env.API_KEY; const key = cache_key(id);',
    'tokenizer=bert-base-uncased max_new_tokens=256',
    'sort_key=name primary_key=id foreign_key=user_id cache_key=v1',
    'MONKEY=banana KEYBOARD=us API_KEY_FILE',
    'commit 3f786850e387550fdab836ed7e6dc881de23001b\nMerge: 1a2b3c4 5d6e7f8\nindex 83db48f..bf269f4 100644',
    'request 123e4567-e89b-12d3-a456-426614174000 done in 12 ms',
    '✓ decodes dGhpcyBpcyBhIGxvbmcgYmFzZTY0IHN0cmluZyBpbiBhIHRlc3QgbmFtZQ== correctly',
    'sha512-Q2x5b2dnZWRVcExvbmdCYXNlNjRJbnRlZ3JpdHlIYXNoVmFsdWVGb3JBUGFja2FnZQ== integrity',
    'eyJ alone, and eyJabc.def',
    'npm_config_cache=/tmp/npm and npm_lifecycle_event=test',
    'the token: string; password?: string | undefined;',
    'x-api-key header is missing',
    'Authorization: Basic realm',
  ];
  for (const text of ordinary) it(JSON.stringify(text.slice(0, 40)), () => expect(redact(text)).toBe(text));
});

describe('redactJsonText: JSON text as the store writes it', () => {
  it('redacts a secret behind an escape, which redacting the text itself misses', () => {
    const key = k('sk-', 'proj-', 'abcDEF1234567890abcdef12345');
    const text = JSON.stringify([{ id: 'j1', reason: `tests failed:\n${key}` }]);
    expect(redact(text)).toBe(text); // "\nsk-…": no word boundary after the n
    const out = redactJsonText(text);
    expect(out).not.toContain('abcDEF');
    expect(JSON.parse(out)).toEqual([{ id: 'j1', reason: `tests failed:\n${REDACTED}` }]);
  });

  it('returns text with no secret as it is, unparsed', () => {
    const text = '[{"id":"j1","reason":"a \\"quoted\\" \\u001b word"}]';
    expect(redactJsonText(text)).toBe(text);
  });
});
