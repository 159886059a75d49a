import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveAgent } from '../../src/agent/resolve.js';
import { UserError } from '../../src/errors.js';
import { Config } from '../../src/model/config.js';
import { tempDir } from '../helpers/tmp.js';

const bin = tempDir('ii-resolve-');
afterAll(bin.cleanup);
for (const name of ['opencode', 'gemini', 'my-agent']) {
  writeFileSync(join(bin.path, name), '#!/bin/sh\n');
  chmodSync(join(bin.path, name), 0o755);
}
const env = { PATH: bin.path };
const config = (agent: Record<string, unknown> = {}) => Config.parse({ agent });

describe('resolveAgent', () => {
  it('defaults to opencode acp', () => {
    expect(resolveAgent(config(), undefined, env)).toEqual({
      name: 'opencode',
      command: ['opencode', 'acp'],
      env: {},
    });
  });

  it('takes a preset from config, and --agent over it', () => {
    expect(resolveAgent(config({ preset: 'gemini' }), undefined, env).command).toEqual(['gemini', '--acp']);
    expect(resolveAgent(config({ preset: 'gemini' }), 'opencode', env).name).toBe('opencode');
  });

  it('takes [agent] command and env from config', () => {
    const spec = resolveAgent(
      config({ command: ['my-agent', '--stdio'], env: { KEY: 'v' } }),
      undefined,
      env,
    );
    expect(spec).toEqual({ name: 'my-agent', command: ['my-agent', '--stdio'], env: { KEY: 'v' } });
  });

  it('accepts a path or a command on PATH for --agent', () => {
    const p = join(bin.path, 'my-agent');
    expect(resolveAgent(config(), p, env)).toEqual({ name: 'my-agent', command: [p], env: {} });
    expect(resolveAgent(config(), 'my-agent', env).command).toEqual(['my-agent']);
  });

  it('resolves the built-in scripted agent to node and its startup snapshot, its bundle if that fails', () => {
    const spec = resolveAgent(config(), 'scripted', env);
    expect(spec.fallback).toEqual([
      process.execPath,
      expect.stringMatching(/dist\/agent\/scripted\/main\.js$/),
    ]);
    expect(spec.command[0]).toBe(process.execPath);
    // The bundle's snapshot for this node (scripts/scripted-snapshot.mjs), not the compiled module tree.
    expect(spec.command.slice(1, 2)).toEqual(['--snapshot-blob']);
    expect(spec.command[2]).toMatch(
      /dist\/agent\/scripted\/main\.js\.snapshot-v[\d.]+-\w+-\w+-[0-9a-f]{12}\.blob$/,
    );
  });

  it("asks glibc's malloc for huge pages for the snapshot it reads, beside the tunables set, under [agent] env", () => {
    expect(resolveAgent(config(), 'scripted', env).env).toEqual({ GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1' });
    expect(
      resolveAgent(config(), 'scripted', { ...env, GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }).env
        .GLIBC_TUNABLES,
    ).toBe('glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1');
    // One the user set is theirs.
    expect(
      resolveAgent(config(), 'scripted', { ...env, GLIBC_TUNABLES: 'glibc.malloc.hugetlb=0' }).env
        .GLIBC_TUNABLES,
    ).toBe('glibc.malloc.hugetlb=0');
    expect(resolveAgent(config({ env: { GLIBC_TUNABLES: 'x=1', K: 'v' } }), 'scripted', env).env).toEqual({
      GLIBC_TUNABLES: 'x=1',
      K: 'v',
    });
  });

  it('says how to install an agent, and points at ii demo, when the binary is missing', () => {
    const err = (() => {
      try {
        resolveAgent(config({ preset: 'claude' }), undefined, env);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(UserError);
    expect(err?.message).toContain('npm install -g @agentclientprotocol/claude-agent-acp');
    expect(err?.message).toContain('ii demo');
    expect(() => resolveAgent(config(), '/nowhere/agent', env)).toThrow(/not found or is not executable/);
    expect(() => resolveAgent(config(), 'nonesuch', env)).toThrow(/unknown agent "nonesuch"/);
    expect(() => resolveAgent(config({ preset: 'nonesuch' }), undefined, env)).toThrow(
      /unknown agent preset/,
    );
  });
});
