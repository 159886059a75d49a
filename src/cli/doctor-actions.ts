// The body of ii doctor (definition in doctor.ts).
import { checkConfig, checkGit, checkNode, checkState, type CheckResult } from '../doctor/checks.js';
import { loadConfig } from '../job/config.js';
import { repoRootSync } from '../vcs/git-run.js';
import { stateDir } from '../state/index.js';
import { shownLine, shownText } from '../text/shown.js';
import { printJson, style } from './format.js';

function repoRootOrNull(): string | null {
  try {
    return repoRootSync(process.cwd());
  } catch {
    return null;
  }
}

export async function doctor(o: { json?: boolean; agent?: string }): Promise<void> {
  const repoRoot = repoRootOrNull();
  const config = checkConfig(repoRoot);
  const results: CheckResult[] = [checkNode(), checkGit(), checkState(stateDir()), config];
  results.push(...(await agentChecks(repoRoot, o.agent)));
  const failed = results.filter((r) => !r.ok).length;
  if (o.json) printJson(results);
  else {
    const s = style();
    // A detail can quote what the agent printed (a failed handshake, its session id).
    for (const r of results) {
      process.stdout.write(
        `${r.ok ? s.green('ok  ') : s.red('FAIL')} ${r.name.padEnd(7)} ${shownLine(r.detail)}\n`,
      );
      if (!r.ok && r.fix)
        process.stdout.write(`             → ${shownText(r.fix).split('\n').join('\n               ')}\n`);
    }
    process.stdout.write(
      failed === 0 ? 'Everything looks right.\n' : `${failed} problem${failed === 1 ? '' : 's'} to fix.\n`,
    );
  }
  if (failed > 0) process.exitCode = 1;
}

/** The agent's binary and an ACP handshake with it; the config's agent unless --agent names one. */
async function agentChecks(repoRoot: string | null, override?: string): Promise<CheckResult[]> {
  let config;
  try {
    config = loadConfig(repoRoot ?? process.cwd());
  } catch {
    // An invalid config is reported by the config check; the agent check uses the defaults.
    const { Config } = await import('../job/config.js');
    config = Config.parse({});
  }
  const { checkAgent } = await import('../doctor/agent-check.js');
  return checkAgent(config, override);
}
