// ii doctor's agent checks: the configured agent's binary is there, and it
// answers an ACP handshake (initialize, session/new) in a scratch folder
// within a time limit. Loaded lazily: only doctor pays for the ACP client.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent } from '../agent/acp-session.js';
import { resolveAgent } from '../agent/resolve.js';
import type { AgentSpec } from '../agent/types.js';
import type { Config } from '../model/config.js';
import type { CheckResult } from './checks.js';

/** Real agents start in a few seconds; II_DOCTOR_HANDSHAKE_MS shortens the wait in tests. */
const HANDSHAKE_MS = Number(process.env.II_DOCTOR_HANDSHAKE_MS) || 20_000;

export async function checkAgent(config: Config, override?: string): Promise<CheckResult[]> {
  let spec: AgentSpec;
  try {
    spec = resolveAgent(config, override);
  } catch (err) {
    const [what, ...rest] = (err as Error).message.split('\n');
    return [
      {
        name: 'agent',
        ok: false,
        detail: what ?? 'not found',
        fix: rest.join(' ') || 'Run `ii demo` to try incrementum with its built-in scripted agent.',
      },
    ];
  }
  // The scripted agent without a scenario plays default turns: its jobs
  // complete having changed nothing, which a newcomer cannot tell from a bug.
  const idle =
    spec.name === 'scripted' && !spec.env.II_SCRIPTED_SCENARIO && !process.env.II_SCRIPTED_SCENARIO
      ? '\nno scenario (II_SCRIPTED_SCENARIO): every implement turn changes nothing; see "The scripted agent" in README.md'
      : '';
  const found: CheckResult = {
    name: 'agent',
    ok: true,
    detail: `${spec.name}: ${spec.command.join(' ')}${idle}`,
  };
  const dir = mkdtempSync(join(tmpdir(), 'ii-doctor-'));
  const started = Date.now();
  try {
    // startAgent's own start timeout kills the agent's process group when it
    // does not answer, so nothing is left behind.
    const session = await startAgent({
      agent: spec,
      cwd: dir,
      transcriptPath: join(dir, 'transcript.jsonl'),
      turnTimeoutMs: HANDSHAKE_MS,
      startTimeoutMs: HANDSHAKE_MS,
    });
    await session.close();
    return [
      found,
      { name: 'acp', ok: true, detail: `handshake ok in ${Date.now() - started} ms (session ${session.id})` },
    ];
  } catch (err) {
    return [
      found,
      {
        name: 'acp',
        ok: false,
        detail: `no ACP handshake with ${spec.name}: ${(err as Error).message.split('\n')[0]}`,
        fix: `Check that \`${spec.command.join(' ')}\` starts an ACP agent on stdio (run it by hand: it should wait silently for JSON-RPC input), that it is logged in, and that [agent] command in incrementum.toml is right.`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
