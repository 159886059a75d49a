// `[sandbox] network = { allow = [...] }` as data: which entries the config
// takes, which connections the proxy lets through, the bwrap argv and the
// macOS profile it becomes. Pure; test/e2e/sandbox-net.test.ts runs it.
import { describe, expect, it } from 'vitest';
import { SandboxSection } from '../../src/model/config.js';
import { allows, parseAllowEntry } from '../../src/model/net-allow.js';
import { bwrapArgs } from '../../src/proc/sandbox/bwrap.js';
import { splitTarget } from '../../src/proc/sandbox/net-proxy.js';
import { buildPolicy, type PolicyInput } from '../../src/proc/sandbox/policy.js';
import { seatbeltProfile } from '../../src/proc/sandbox/seatbelt.js';

describe('network allow entries', () => {
  it('takes host names, host:port, wildcards and loopback with a port; refuses the rest with what to write', () => {
    expect(parseAllowEntry('api.anthropic.com')).toEqual({
      host: 'api.anthropic.com',
      port: null,
      loopback: false,
    });
    expect(parseAllowEntry('127.0.0.1:4000')).toEqual({ host: '127.0.0.1', port: 4000, loopback: true });
    expect(parseAllowEntry('localhost:3000')).toMatchObject({ loopback: true, port: 3000 });
    expect(parseAllowEntry('[::1]:8080')).toEqual({ host: '::1', port: 8080, loopback: true });
    expect(parseAllowEntry('*.Example.com:8443')).toEqual({
      host: '*.example.com',
      port: 8443,
      loopback: false,
    });
    for (const bad of [
      '127.0.0.1',
      'localhost',
      'a.com:0',
      'a.com:70000',
      'http://a.com',
      'a*.com',
      '',
      'a b',
    ])
      expect(parseAllowEntry(bad), bad).toBeNull();
    const ok = SandboxSection.safeParse({ network: { allow: ['api.anthropic.com', '127.0.0.1:4000'] } });
    expect(ok.success).toBe(true);
    const bad = SandboxSection.safeParse({ network: { allow: ['127.0.0.1'] } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toContain('a loopback address with its port');
    expect(SandboxSection.safeParse({ network: { allow: [], deny: [] } }).success).toBe(false);
    expect(SandboxSection.parse({}).network).toBe('host');
  });

  it('allows a host on its port (the web ports without one), a wildcard on subdomains only', () => {
    const e = ['api.anthropic.com', '127.0.0.1:4000', '*.example.com', 'git.example.org:22'].map((x) =>
      parseAllowEntry(x)!,
    );
    expect(allows(e, 'api.anthropic.com', 443)).toBe(true);
    expect(allows(e, 'API.Anthropic.com.', 80)).toBe(true);
    expect(allows(e, 'api.anthropic.com', 22)).toBe(false);
    expect(allows(e, 'evil-api.anthropic.com', 443)).toBe(false);
    expect(allows(e, '127.0.0.1', 4000)).toBe(true);
    expect(allows(e, '127.0.0.1', 4001)).toBe(false);
    expect(allows(e, 'a.example.com', 443)).toBe(true);
    expect(allows(e, 'example.com', 443)).toBe(false);
    expect(allows(e, 'badexample.com', 443)).toBe(false);
    expect(allows(e, 'git.example.org', 22)).toBe(true);
    expect(allows(e, 'git.example.org', 443)).toBe(false);
    expect(allows([], 'api.anthropic.com', 443)).toBe(false);
  });

  it('reads a CONNECT target, IPv6 included', () => {
    expect(splitTarget('api.anthropic.com:443')).toEqual({ host: 'api.anthropic.com', port: 443 });
    expect(splitTarget('[::1]:4000')).toEqual({ host: '::1', port: 4000 });
    for (const bad of ['api.anthropic.com', 'a:b', 'a:0', '::1:80', 'a:99999'])
      expect(splitTarget(bad), bad).toBeNull();
  });

  it('becomes a network namespace of its own for bwrap, and loopback ports only on macOS', () => {
    const HOME = '/home/u';
    const input: PolicyInput = {
      workspace: '/home/u/ws',
      repoRoot: '/home/u/r',
      stateDir: '/home/u/.local/state/incrementum',
      home: HOME,
      env: { HOME },
      agentName: 'opencode',
      git: null,
      config: SandboxSection.parse({ network: { allow: ['api.anthropic.com', '127.0.0.1:4000'] } }),
    };
    const p = buildPolicy(input);
    expect(p.network).toEqual({ allow: ['api.anthropic.com', '127.0.0.1:4000'] });
    expect(bwrapArgs(p, () => null, { disableUserns: true })).toContain('--unshare-net');
    const sb = seatbeltProfile(p);
    expect(sb).toContain('(deny network*)');
    expect(sb).toContain('(allow network-outbound (remote ip "localhost:4000"))');
    expect(sb).not.toContain('anthropic');
    // The helpers net-guest.js runs from stay readable under the private /tmp.
    const under = buildPolicy({ ...input, helpers: ['/tmp/pkg', '/opt/node/bin'] });
    expect(under.mounts).toContainEqual(expect.objectContaining({ path: '/tmp/pkg', access: 'ro' }));
    expect(under.mounts.map((m) => m.path)).not.toContain('/opt/node/bin');
  });
});
