// Secrets are redacted from anything incrementum shows or writes for people
// (journals, test-output excerpts, `ii job logs` and `ii job show`, the
// dashboard's live pane, log view and details, diffs): test
// commands and agents print environment dumps, config files and curl lines,
// and a journal is the kind of file that gets pasted into an issue.
//
// The patterns aim at shapes that are secrets with near certainty, so ordinary
// output (stack traces, code, TypeScript's "Unexpected token") passes through
// untouched. Each shape has a test in test/unit/redact.test.ts.

/** What a redacted secret is replaced with. */
export const REDACTED = '[REDACTED]';

interface Rule {
  name: string;
  re: RegExp;
  /** The replacement; the default replaces the whole match. */
  to?: string | ((...m: string[]) => string);
  /**
   * What any match contains: a text without it skips the rule. The dashboard
   * redacts its live pane (hundreds of lines) on every update, and the rules
   * that start with a character class try every position of the text.
   */
  needs?: string | RegExp;
}

/**
 * A key name below ending where its value begins (`token=`, `"api_key":`), to
 * skip the assignment rules on text that has none: a bare word is not enough,
 * since every job's JSON holds `"input_tokens":`, and the rules' lazy key
 * prefix tries every position of a long text (1,000 jobs: 50 ms).
 */
const KEY_WORD = /(?:pass(?:wd|word|phrase)|secret|token|key)["']?\s*[=:]/i;

// Key names whose value is a secret in an assignment (`DB_PASSWORD=...`,
// `?token=...`, `"api_key": "..."`); a prefix such as GITHUB_ or client_ is allowed.
const KEY = String.raw`[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)`;

const RULES: Rule[] = [
  {
    // A whole PEM block; an unterminated one (output cut mid-key) is redacted to the end.
    name: 'private key block',
    re: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$(?![\s\S]))/g,
    to: `-----BEGIN $1PRIVATE KEY-----\n${REDACTED}\n-----END $1PRIVATE KEY-----`,
    needs: 'PRIVATE KEY-----',
  },
  // Anthropic before OpenAI: sk-ant-... also starts with sk-.
  { name: 'anthropic key', re: /\bsk-ant-[A-Za-z0-9_-]{20,}/g, needs: 'sk-ant-' },
  { name: 'openai key', re: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g, needs: 'sk-' },
  { name: 'stripe key', re: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/g, needs: /k_(?:live|test)_/ },
  { name: 'google api key', re: /\bAIza[0-9A-Za-z_-]{35}/g, needs: 'AIza' },
  { name: 'github token', re: /\bgh[pousr]_[A-Za-z0-9]{36,}/g, needs: /gh[pousr]_/ },
  { name: 'github fine-grained token', re: /\bgithub_pat_[A-Za-z0-9_]{22,}/g, needs: 'github_pat_' },
  // glpat-<20> and the newer glpat-<base64>.<version>.<crc> shape.
  {
    name: 'gitlab token',
    re: /\bgl(?:pat|dt|ptt|rt|cbt|oas|soat|ffct)-[A-Za-z0-9_.-]{20,}/g,
    needs: /gl(?:pat|dt|ptt|rt|cbt|oas|soat|ffct)-/,
  },
  { name: 'npm token', re: /\bnpm_[A-Za-z0-9]{36}\b/g, needs: 'npm_' },
  // Header and payload are base64url JSON objects, so both start with eyJ ({").
  { name: 'jwt', re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, needs: 'eyJ' },
  { name: 'slack token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, needs: 'xox' },
  { name: 'aws access key id', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, needs: /AKIA|ASIA/ },
  {
    // ~/.aws/credentials and env dumps: `aws_secret_access_key = wJalr...`,
    // `AWS_SECRET_ACCESS_KEY: "..."`, whatever the separator and quotes.
    name: 'aws secret access key',
    re: /\b(aws_secret_access_key["']?\s*[=:]\s*["']?)(?!\[REDACTED\])[A-Za-z0-9/+=]{16,}/gi,
    to: (_m, head: string) => `${head}${REDACTED}`,
    needs: /aws_secret_access_key/i,
  },
  {
    name: 'bearer token',
    re: /\b(Bearer)(\s+)[A-Za-z0-9._~+/=-]{12,}/gi,
    to: (_m, word: string, space: string) => `${word}${space}${REDACTED}`,
    needs: /bearer/i,
  },
  {
    name: 'basic auth header',
    re: /\b(Authorization:\s*Basic)(\s+)[A-Za-z0-9+/=]{8,}/gi,
    to: (_m, word: string, space: string) => `${word}${space}${REDACTED}`,
    needs: /authorization/i,
  },
  {
    // HTTP headers that carry a key on their own (curl -H, request dumps).
    name: 'key header',
    re: /\b((?:x-)?(?:api-key|auth-token|access-token)|private-token)(:[ \t]*)(?!\[REDACTED\])[^\s"']{8,}/gi,
    to: (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`,
    needs: /-(?:key|token)/i,
  },
  {
    // user:password@host in a URL.
    name: 'url credentials',
    re: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)([^\s@/]+)(@)/gi,
    to: (_m, head: string, _pw: string, at: string) => `${head}${REDACTED}${at}`,
    needs: '://',
  },
  {
    // "password": "x" in JSON: the key itself is quoted, so prose such as
    // "Unexpected token: '}'" never matches.
    name: 'json assignment',
    re: new RegExp(String.raw`(["']${KEY}["']\s*:\s*)(["'])(?!\[REDACTED\])[^"'\n]+\2`, 'gi'),
    to: (_m, head: string, q: string) => `${head}${q}${REDACTED}${q}`,
    needs: KEY_WORD,
  },
  {
    // password = "x" (TOML, shell, code) with a quoted value.
    name: 'quoted assignment',
    re: new RegExp(String.raw`(\b${KEY}\s*=\s*)(["'])(?!\[REDACTED\])[^"'\n]+\2`, 'gi'),
    to: (_m, head: string, q: string) => `${head}${q}${REDACTED}${q}`,
    needs: KEY_WORD,
  },
  {
    // password=x, --token=x, ?api_key=x&...: no space around '=', so
    // `const token = getToken()` and `token == x` stay as they are.
    name: 'assignment',
    re: new RegExp(String.raw`(\b${KEY}=)(?![=\s"']|\[REDACTED\])[^\s"'&;,)]+`, 'gi'),
    to: (_m, head: string) => `${head}${REDACTED}`,
    needs: KEY_WORD,
  },
  {
    // Environment dumps and .env files: an upper-case name ending in _KEY,
    // _TOKEN, _SECRET, ... (`MY_API_KEY=abc`, `SIGNING_KEY=...`). Upper case
    // only: code is full of sort_key=, cache_key=, primary_key=.
    name: 'env secret',
    re: /\b([A-Z][A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH)=)(?![\s"']|\[REDACTED\])[^\s"'&;,)]+/g,
    to: (_m, head: string) => `${head}${REDACTED}`,
    needs: /_(?:KEY|TOKEN|SECRET|PASS|PWD|CREDENTIAL|AUTH)/,
  },
];

/** `text` with every secret shape above replaced by [REDACTED]. */
export function redact(text: string): string {
  const out = redactRules(text);
  if (!out.includes('\x1b')) return out;
  // A terminal escape sequence glued to a secret hides it from the rules'
  // word boundaries (`\x1b[31msk-ant-…`: the m of the colour runs into the
  // key): the text between sequences is redacted again on its own. The whole
  // text went first, so what spans a sequence (a PEM block in colour) is
  // redacted as before.
  return out
    .split(ESCAPE_SEQUENCE)
    .map((part, i) => (i % 2 === 1 ? part : redactRules(part)))
    .join('');
}

/** A terminal escape sequence: CSI (colours, cursor), OSC (titles, links), or a two-byte one; captured, so split keeps it. */
const ESCAPE_SEQUENCE = new RegExp(
  String.raw`(\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[^[\]])`,
);

/**
 * The rules as text: a stored verdict that a text has nothing to redact
 * (text/json.ts shownAsIs) holds only for the rules it was reached with, so
 * it is kept with their version (text/json.ts SHOWN_RULES), which a test
 * holds to this text's hash. Code is not in it: a change to how the rules
 * are applied, or to a replacement function, bumps the version at its head.
 */
export const RULES_TEXT = [
  'redact 1',
  REDACTED,
  KEY_WORD,
  ESCAPE_SEQUENCE,
  ...RULES.map((r) => [r.name, r.re, typeof r.to === 'string' ? r.to : '', r.needs].map(String).join('\t')),
].join('\n');

function redactRules(text: string): string {
  let out = text;
  // Three rules share KEY_WORD: on a text no rule changed its answer stands
  // (each scan of a 5 MB job listing costs milliseconds).
  let absent: Set<Rule['needs']> | null = null;
  for (const r of RULES) {
    if (r.needs !== undefined) {
      if (absent?.has(r.needs)) continue;
      if (!(typeof r.needs === 'string' ? out.includes(r.needs) : r.needs.test(out))) {
        (absent ??= new Set()).add(r.needs);
        continue;
      }
    }
    const before = out;
    r.re.lastIndex = 0;
    out =
      typeof r.to === 'function'
        ? out.replace(r.re, r.to as (...m: string[]) => string)
        : out.replace(r.re, r.to ?? REDACTED);
    if (out !== before) absent = null;
  }
  return out;
}

/**
 * `value` with redact() applied to every string in it (keys kept): for JSON
 * output, where redacting the JSON text itself could cut an escape in half.
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v);
    return out as T;
  }
  return value;
}
