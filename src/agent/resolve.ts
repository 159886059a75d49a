// Which agent a job runs: `--agent NAME|PATH`, else `[agent] command`, else
// `[agent] preset`, else opencode. The binary is looked up on PATH before
// anything starts, so a missing agent is a clear error, not a failed job.
import { accessSync, constants, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { UserError } from '../errors.js';
import type { Config } from '../model/config.js';
import { packageRoot } from '../package-root.js';
import { scriptedSnapshotName } from './snapshot-name.js';
import type { AgentSpec } from './types.js';

interface Preset {
  command: string[];
  /** How to get it: an npm package that puts the command on PATH. */
  install: string;
}

export const PRESETS: Record<string, Preset> = {
  opencode: { command: ['opencode', 'acp'], install: 'npm install -g opencode-ai' },
  claude: { command: ['claude-agent-acp'], install: 'npm install -g @agentclientprotocol/claude-agent-acp' },
  gemini: { command: ['gemini', '--acp'], install: 'npm install -g @google/gemini-cli' },
  codex: { command: ['codex-acp'], install: 'npm install -g @agentclientprotocol/codex-acp' },
};
export const PRESET_NAMES = [...Object.keys(PRESETS), 'scripted'];
export const DEFAULT_AGENT = 'opencode';

/** The built-in scripted agent (scenario-driven; `ii demo` and the tests use it). */
export function scriptedAgentCommand(): string[] {
  const dir = join(packageRoot(), 'dist', 'agent', 'scripted');
  // Its startup snapshot, made by this very node binary (scripts/scripted-snapshot.mjs,
  // src/agent/snapshot-name.ts): a start takes a third less CPU than from the
  // bundle. No other binary can load it.
  const blob = join(dir, scriptedSnapshotName());
  if (statSafe(blob)) return [process.execPath, '--snapshot-blob', blob];
  return scriptedAgentBundle();
}

/** The scripted agent from its bundle (rolldown.config.mjs): one file starts faster than ~100 modules. */
export function scriptedAgentBundle(): string[] {
  return [process.execPath, join(packageRoot(), 'dist', 'agent', 'scripted', 'main.js')];
}

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where `cmd` would run from: itself when it holds a slash, else the first PATH entry that has it. */
export function findOnPath(cmd: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (cmd.includes('/')) return isExecutableFile(cmd) ? resolve(cmd) : null;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, cmd);
    if (isExecutableFile(p)) return p;
  }
  return null;
}

const HOW_TO =
  `Install one of the agents incrementum knows (${Object.entries(PRESETS)
    .map(([n, p]) => `${n}: ${p.install}`)
    .join('; ')}), ` +
  'or set `[agent] command = ["your-agent", "--acp"]` in incrementum.toml, or pass --agent NAME|PATH. ' +
  'To see incrementum work without any agent installed, run `ii demo`.';

function missing(name: string, cmd: string, preset?: Preset): UserError {
  const first = preset
    ? `the ${name} agent needs \`${cmd}\` on PATH, and it is not there (install it with \`${preset.install}\`).`
    : `the agent command \`${cmd}\` was not found${cmd.includes('/') ? ' or is not executable' : ' on PATH'}.`;
  return new UserError(`${first}\n${HOW_TO}`);
}

export function resolveAgent(
  config: Config,
  override?: string,
  env: NodeJS.ProcessEnv = process.env,
): AgentSpec {
  const agentEnv = { ...config.agent.env };
  let name: string;
  let command: string[];
  let preset: Preset | undefined;
  const choice = override?.trim() || undefined;
  if (choice !== undefined && !(choice in PRESETS) && choice !== 'scripted') {
    // A path (or a command name on PATH) given on the command line.
    const looksLikePath = choice.includes('/') || isAbsolute(choice);
    if (!looksLikePath && !findOnPath(choice, env))
      throw new UserError(
        `unknown agent "${choice}": not a preset (${PRESET_NAMES.join(', ')}) and not a command on PATH.\n${HOW_TO}`,
      );
    name = basename(choice);
    command = [choice];
  } else if (choice === undefined && config.agent.command) {
    command = [...config.agent.command];
    name = config.agent.preset ?? basename(command[0]!);
  } else {
    name = choice ?? config.agent.preset ?? DEFAULT_AGENT;
    if (name === 'scripted') {
      const cmd = scriptedAgentCommand();
      if (!statSafe(cmd.at(-1)!))
        throw new UserError(
          `the scripted agent is not built (${cmd.at(-1)} is missing): run \`npm run build\`.`,
        );
      const bundle = scriptedAgentBundle();
      if (cmd.at(-1) === bundle[1]) return { name, command: cmd, env: agentEnv };
      return { name, command: cmd, env: { ...hugeMalloc(env), ...agentEnv }, fallback: bundle };
    }
    preset = PRESETS[name];
    if (!preset)
      throw new UserError(
        `unknown agent preset "${name}" ([agent] preset); the presets are ${PRESET_NAMES.join(', ')}.\n${HOW_TO}`,
      );
    command = [...preset.command];
  }
  if (!findOnPath(command[0]!, { ...env, ...agentEnv })) throw missing(name, command[0]!, preset);
  return { name, command, env: agentEnv };
}

/**
 * GLIBC_TUNABLES asking glibc's malloc for transparent huge pages for its
 * large blocks (where the kernel gives them on request: madvise mode),
 * beside any tunables already set. Node reads a startup snapshot whole into
 * one such block (8 MB for the scripted agent's), and touching it page by
 * page was a third of the agent's page faults: 8,365 faults and 200 ms of
 * CPU per start on a 2-core VM where a fault costs ~15 µs, 5,000 to 5,560
 * and 140 to 160 ms with it (`node -e 0`: 2,750 and 90 to 100 ms). A glibc
 * without the tunable, or another libc, ignores it.
 */
function hugeMalloc(env: NodeJS.ProcessEnv): { GLIBC_TUNABLES: string } {
  const set = env.GLIBC_TUNABLES?.trim();
  if (set && /(^|:)glibc\.malloc\.hugetlb=/.test(set)) return { GLIBC_TUNABLES: set };
  return { GLIBC_TUNABLES: set ? `${set}:glibc.malloc.hugetlb=1` : 'glibc.malloc.hugetlb=1' };
}

function statSafe(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
