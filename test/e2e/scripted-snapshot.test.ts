// The scripted agent as jobs start it: from its V8 startup snapshot, built
// with the bundle for this node (scripts/scripted-snapshot.mjs). What it reads
// from its environment is read as it starts, not when the snapshot was made,
// and what it runs (a shell, git) it runs from the snapshot as from the bundle.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, readSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent } from '../../src/agent/acp-session.js';
import { resolveAgent, scriptedAgentBundle, scriptedAgentCommand } from '../../src/agent/resolve.js';
import { scriptedSnapshotName } from '../../src/agent/snapshot-name.js';
import type { AgentActivity, AgentSpec } from '../../src/agent/types.js';
import { Config } from '../../src/model/config.js';
import { groupAlive } from '../../src/proc/group.js';
import { tempDir } from '../helpers/tmp.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

describe('the scripted agent from its startup snapshot', () => {
  it('is what jobs start, on this node', () => {
    const cmd = scriptedAgentCommand();
    expect(cmd.slice(0, 2)).toEqual([process.execPath, '--snapshot-blob']);
    expect(cmd[2]!.endsWith(`dist/agent/scripted/${scriptedSnapshotName()}`)).toBe(true);
    expect(existsSync(cmd[2]!)).toBe(true);
  });

  it('plays the scenario its environment names, runs a shell and git, and leaves nothing running', async () => {
    const t = tempDir('ii-snap-');
    cleanups.push(t.cleanup);
    const ws = join(t.path, 'ws');
    mkdirSync(ws);
    git(ws, 'init', '-q', '-b', 'main');
    writeFileSync(join(ws, 'README.md'), '# x\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'base');
    const scenario = join(t.path, 'scenario.json');
    writeFileSync(
      scenario,
      JSON.stringify({
        implement: [
          {
            actions: [
              { type: 'message', text: 'from the scenario' },
              { type: 'shell', command: 'echo ran > shell.txt' },
              { type: 'git_commit', files: ['shell.txt'], message: 'shell output' },
            ],
          },
        ],
      }),
    );
    const s = await startAgent({
      agent: { name: 'scripted', command: scriptedAgentCommand(), env: { II_SCRIPTED_SCENARIO: scenario } },
      cwd: ws,
      transcriptPath: join(t.path, 'transcript.jsonl'),
      turnTimeoutMs: 60_000,
      stopGrace: { eofMs: 500, termMs: 500 },
    });
    const pid = s.pid!;
    cleanups.push(async () => {
      await s.close();
      expect(groupAlive(pid)).toBe(false);
    });
    const r = await s.prompt('You are working on one todo in a git workspace at /somewhere.');
    expect(r).toMatchObject({ stopReason: 'end_turn', text: 'from the scenario' });
    expect(readFileSync(join(ws, 'shell.txt'), 'utf8')).toBe('ran\n');
    expect(git(ws, 'log', '-1', '--format=%s')).toBe('shell output');
    // Its place in the scenario, kept beside it as the bundle keeps it.
    expect(existsSync(`${scenario}.state`)).toBe(true);
  });

  // What node does with a blob it cannot use: one of another version it
  // refuses (exit 14, "Failed to load the startup snapshot because it was
  // built with Node.js version ..."), one cut short it crashes on (SIGSEGV),
  // one that is no snapshot at all it aborts on (SIGABRT). The job's agent
  // starts from its bundle all the same.
  for (const [what, bytes] of [
    ['cut short', 100_000],
    ['not a snapshot', 0],
  ] as const)
    it(`starts from its bundle when node cannot start from the blob (${what})`, async () => {
      const t = tempDir('ii-snapbad-');
      cleanups.push(t.cleanup);
      const bad = join(t.path, 'bad.blob');
      if (bytes === 0) writeFileSync(bad, 'not a heap\n');
      else {
        const buf = Buffer.alloc(bytes);
        const fd = openSync(scriptedAgentCommand()[2]!, 'r');
        readSync(fd, buf, 0, bytes, 0);
        closeSync(fd);
        writeFileSync(bad, buf);
      }
      const spec = resolveAgent(Config.parse({}), 'scripted');
      expect(spec.fallback).toEqual(scriptedAgentBundle());
      const warnings: string[] = [];
      const s = await startWarned(
        { ...spec, command: [process.execPath, '--snapshot-blob', bad] },
        t.path,
        warnings,
      );
      const pid = s.pid!;
      cleanups.push(async () => {
        await s.close();
        expect(groupAlive(pid)).toBe(false);
      });
      expect(warnings.join('\n')).toMatch(
        /the agent \(scripted\) (was killed by SIG\w+|exited with code \d+)/,
      );
      expect(warnings.join('\n')).toContain(`started again with \`${scriptedAgentBundle().join(' ')}\``);
      const r = await s.prompt('You are working on one todo in a git workspace at /somewhere.');
      expect(r.stopReason).toBe('end_turn');
    });

  it('is not started again when it dies after answering initialize: its program works, the crash is its own', async () => {
    const t = tempDir('ii-snapdie-');
    cleanups.push(t.cleanup);
    // Answers initialize, then exits on session/new.
    const agent = `
      const rl = require('node:readline').createInterface({ input: process.stdin });
      rl.on('line', (l) => {
        const m = JSON.parse(l);
        if (m.method === 'initialize')
          process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } }) + '\\n');
        else if (m.method === 'session/new') process.exit(7);
      });`;
    const warnings: string[] = [];
    const started = startWarned(
      {
        name: 'scripted',
        command: [process.execPath, '-e', agent],
        env: {},
        fallback: scriptedAgentBundle(),
      },
      t.path,
      warnings,
    );
    await expect(started).rejects.toThrow(/exited with code 7/);
    expect(warnings.join('\n')).not.toContain('started again');
  });
});

/** Starts `agent` in `dir`, the warnings it reports pushed to `warnings`. */
function startWarned(agent: AgentSpec, dir: string, warnings: string[]) {
  return startAgent({
    agent,
    cwd: dir,
    transcriptPath: join(dir, 'transcript.jsonl'),
    turnTimeoutMs: 60_000,
    stopGrace: { eofMs: 500, termMs: 500 },
    onActivity: (a: AgentActivity) => {
      if (a.kind === 'warning') warnings.push(a.message);
    },
  });
}
