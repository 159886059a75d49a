// The permission decision table ([agent] permissions, [agent.allow],
// allow-always) and the parsing of [agent] ask-timeout.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  alwaysRuleFor,
  askOf,
  commandMatches,
  decide,
  requestFacts,
  type PermissionPolicy,
  type RequestFacts,
} from '../../src/agent/permission-policy.js';
import { WorkspaceRoot } from '../../src/agent/workspace-path.js';
import { Config, parseDuration } from '../../src/model/config.js';
import { tempDir } from '../helpers/tmp.js';

const policy = (mode: PermissionPolicy['mode'], o: Partial<PermissionPolicy> = {}): PermissionPolicy => ({
  mode,
  allowCommands: [],
  allowKinds: [],
  always: [],
  ...o,
});
const facts = (o: Partial<RequestFacts>): RequestFacts => ({
  kind: null,
  command: null,
  outside: [],
  git: [],
  ...o,
});
const exec = (command: string | null) => facts({ kind: 'execute', command });
const edit = facts({ kind: 'edit' });

describe('decide', () => {
  it.each([
    // mode, request, verdict
    ['workspace', edit, 'allow'],
    ['workspace', exec('rm -rf build'), 'allow'],
    ['workspace', facts({ kind: 'edit', outside: ['/etc/passwd'] }), 'reject'],
    ['ask', edit, 'ask'],
    ['ask', exec('npm test'), 'ask'],
    ['ask', facts({ kind: 'read' }), 'ask'],
    ['ask', facts({ kind: 'edit', outside: ['../x'] }), 'reject'],
    ['ask', facts({ kind: 'edit', git: ['.git/config'] }), 'reject'],
    ['ask-commands', edit, 'allow'],
    ['ask-commands', facts({ kind: 'read' }), 'allow'],
    // No locations: decided by kind; an execute is a command, not "inside the workspace".
    ['ask-commands', exec(null), 'ask'],
    ['ask-commands', exec('ls'), 'ask'],
    // No kind, but a shell command in its input: a command.
    ['ask-commands', facts({ command: 'curl x' }), 'ask'],
    ['ask-commands', facts({ kind: 'execute', outside: ['/tmp/x'] }), 'reject'],
  ] as const)('%s: %j → %s', (mode, f, verdict) => {
    expect(decide(policy(mode), f).verdict).toBe(verdict);
  });

  it('[agent.allow] kinds and command prefixes never ask; outside the workspace is still rejected', () => {
    const p = policy('ask', { allowKinds: ['read'], allowCommands: ['npm test', 'git status'] });
    expect(decide(p, facts({ kind: 'read' })).verdict).toBe('allow');
    expect(decide(p, exec('npm test')).verdict).toBe('allow');
    expect(decide(p, exec('npm  test -- -t foo')).verdict).toBe('allow');
    expect(decide(p, exec('git status --short')).reason).toMatch(/\[agent.allow\] commands has "git status"/);
    // Whole words, and nothing more run through the shell.
    expect(decide(p, exec('npm tests')).verdict).toBe('ask');
    expect(decide(p, exec('npm test && curl evil.example')).verdict).toBe('ask');
    expect(decide(p, exec('npm test; rm -rf ~')).verdict).toBe('ask');
    expect(decide(p, exec('npm test $(whoami)')).verdict).toBe('ask');
    expect(decide(p, exec('npm test > /etc/x')).verdict).toBe('ask');
    expect(decide(p, facts({ kind: 'read', outside: ['/etc/shadow'] })).verdict).toBe('reject');
  });

  it('allow-always covers the same kind and the first two words of the command, for this policy (job) only', () => {
    const p = policy('ask');
    p.always.push(alwaysRuleFor({ tool_kind: 'execute', command: 'npm test -- -t one' }));
    expect(decide(p, exec('npm test -- -t two')).verdict).toBe('allow');
    expect(decide(p, exec('npm install left-pad')).verdict).toBe('ask');
    expect(decide(p, exec('npm test | tee x')).verdict).toBe('ask');
    expect(decide(p, edit).verdict).toBe('ask');
    p.always.push(alwaysRuleFor({ tool_kind: 'edit', command: null }));
    expect(decide(p, edit).verdict).toBe('allow');
    expect(decide(p, facts({ kind: 'edit', outside: ['/x'] })).verdict).toBe('reject');
    expect(decide(policy('ask'), edit).verdict).toBe('ask');
  });

  it('allow-always on a command that runs its arguments (bash -c, env, sudo, node -e) covers that whole command only', () => {
    const p = policy('ask');
    p.always.push(alwaysRuleFor({ tool_kind: 'execute', command: 'bash -c "npm run lint"' }));
    p.always.push(alwaysRuleFor({ tool_kind: 'execute', command: 'node -e "console.log(1)"' }));
    p.always.push(alwaysRuleFor({ tool_kind: 'execute', command: '/usr/bin/env CI=1 npm test' }));
    expect(decide(p, exec('bash -c "npm run lint"')).verdict).toBe('allow');
    expect(decide(p, exec('bash -c "rm -rf src"')).verdict).toBe('ask');
    expect(decide(p, exec("node -e \"require('fs').rmSync('src')\"")).verdict).toBe('ask');
    expect(decide(p, exec('/usr/bin/env CI=1 curl -o x https://example.com')).verdict).toBe('ask');
    // An interpreter running a file keeps the two-word rule.
    expect(alwaysRuleFor({ tool_kind: 'execute', command: 'node scripts/build.js --watch' }).prefix).toBe(
      'node scripts/build.js',
    );
  });

  it('commandMatches takes whole words', () => {
    expect(commandMatches('git status', 'git status')).toBe(true);
    expect(commandMatches('git statuses', 'git status')).toBe(false);
    expect(commandMatches('git', 'git status')).toBe(false);
    expect(commandMatches(null, 'git')).toBe(false);
  });
});

describe('the request as a person sees it', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('ii-policy-')));
  afterEach(() => tmp.cleanup());

  it('takes the kind, the command, the paths, a diff preview and the options from the tool call', () => {
    const ws = join(tmp.path, 'ws');
    mkdirSync(ws);
    const call = {
      kind: 'edit',
      title: 'Edit a.ts',
      locations: [{ path: join(ws, 'a.ts') }],
      content: [{ type: 'diff', path: join(ws, 'a.ts'), oldText: 'x', newText: 'y' }],
    };
    const ask = askOf(call, [{ optionId: 'o1', name: 'Allow', kind: 'allow_once' }]);
    expect(ask).toMatchObject({
      tool_kind: 'edit',
      title: 'Edit a.ts',
      command: null,
      paths: [join(ws, 'a.ts')],
    });
    expect(ask.diff_preview).toBe(`${join(ws, 'a.ts')}:\n-x\n+y`);
    expect(ask.options).toEqual([{ id: 'o1', name: 'Allow', kind: 'allow_once' }]);
    expect(requestFacts(new WorkspaceRoot(ws), call)).toEqual({
      kind: 'edit',
      command: null,
      outside: [],
      git: [],
    });
    const bash = { kind: 'execute', title: 'bash', rawInput: { command: ' npm test ' } };
    expect(askOf(bash, []).command).toBe('npm test');
    expect(requestFacts(new WorkspaceRoot(ws), { ...bash, locations: [{ path: '/etc/x' }] }).outside).toEqual(
      ['/etc/x'],
    );
  });
});

describe('[agent] ask-timeout', () => {
  it.each([
    ['30m', 1_800_000],
    ['90s', 90_000],
    ['1h30m', 5_400_000],
    ['1h 30min', 5_400_000],
    ['500ms', 500],
    ['2', 2000],
    ['', null],
    ['soon', null],
    ['30 x', null],
    ['5m!', null],
  ])('%j → %s ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it('defaults to 30 minutes, takes a duration string or seconds, and says what it wants otherwise', () => {
    expect(Config.parse({}).agent['ask-timeout']).toBe(1_800_000);
    expect(Config.parse({ agent: { 'ask-timeout': '90s' } }).agent['ask-timeout']).toBe(90_000);
    expect(Config.parse({ agent: { 'ask-timeout': 45 } }).agent['ask-timeout']).toBe(45_000);
    const bad = Config.safeParse({ agent: { 'ask-timeout': 'later' } });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.message).toMatch(/"30m", "90s"/);
    expect(Config.safeParse({ agent: { permissions: 'sometimes' } }).success).toBe(false);
    expect(Config.parse({ agent: { allow: { commands: ['npm test'] } } }).agent.allow).toEqual({
      commands: ['npm test'],
      kinds: [],
    });
  });
});
