// The real agents for end-to-end tests, offline: each a pinned npm package
// installed once into a cache folder (hundreds of MB each, so no dependency
// of ours), with a private home that points it at a scripted model server
// (model-server.ts). All run on this repository's Node (24).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { ROOT } from './cli.js';

// Pinned; the newest of each in November 2026 (`npm view PACKAGE version`).
export const OPENCODE = { pkg: 'opencode-ai', version: '1.18.33', bin: 'opencode' };
export const GEMINI = { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' };
export const CLAUDE = {
  pkg: '@agentclientprotocol/claude-agent-acp',
  version: '0.101.0',
  bin: 'claude-agent-acp',
};
type Pinned = typeof OPENCODE;

const CACHE = process.env.II_TEST_CACHE || join(ROOT, 'node_modules', '.cache', 'incrementum-test');

const npm = (args: string[], timeout: number) =>
  spawnSync('npm', [...args, '--no-audit', '--no-fund'], { encoding: 'utf8', timeout });

/** Why the npm registry cannot be reached, or null when it answers. */
function registryUnreachable(): string | null {
  const r = npm(['ping', '--fetch-retries=0'], 30_000);
  if (r.status === 0) return null;
  const lines = (r.stderr || String(r.error)).trim().split('\n');
  const said = lines.find((l) => /FetchError|reason:/.test(l)) ?? lines.at(-1);
  return `the npm registry cannot be reached (npm ping: ${said})`;
}

/**
 * The agent's binary, installing the package into the cache when missing.
 * Returns a reason to skip when the npm registry cannot be reached (no
 * network); any other failure to install throws, so the test fails.
 */
export function ensureAgent(p: Pinned): { bin: string } | { skip: string } {
  const prefix = join(CACHE, `${p.pkg.replace(/^@/, '').replace('/', '+')}-${p.version}`);
  const bin = join(prefix, 'node_modules', '.bin', p.bin);
  if (existsSync(bin)) return { bin };
  const offline = registryUnreachable();
  if (offline) {
    const skip = `${p.pkg}@${p.version} is not installed and ${offline}`;
    console.warn(`skipping the tests of ${p.bin}: ${skip}`);
    return { skip };
  }
  // Into a folder of its own, renamed when complete: test files run in
  // parallel and may install the same package at once, and a half-done
  // install must not pass for a finished one.
  const partial = `${prefix}.partial-${process.pid}`;
  mkdirSync(partial, { recursive: true });
  const r = npm(['install', '--no-save', '--prefix', partial, `${p.pkg}@${p.version}`], 300_000);
  try {
    if (r.status !== 0 || !existsSync(join(partial, 'node_modules', '.bin', p.bin)))
      throw new Error(
        `npm install ${p.pkg}@${p.version} failed: ${(r.stderr || String(r.error)).slice(-800)}`,
      );
    if (!existsSync(bin)) {
      rmSync(prefix, { recursive: true, force: true }); // what an interrupted install left
      renameSync(partial, prefix);
    }
  } catch (err) {
    if (!existsSync(bin)) throw err;
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return { bin };
}

/** PATH with this Node first, so an agent's `#!/usr/bin/env node` gets Node 24. */
const nodePath = () => `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;

/** opencode's user config pointing it at the scripted model, with edits allowed. */
export function opencodeConfig(baseURL: string): string {
  return JSON.stringify({
    provider: {
      mock: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Mock',
        options: { baseURL, apiKey: 'x' },
        models: { scripted: { name: 'Scripted', tool_call: true } },
      },
    },
    model: 'mock/scripted',
    permission: { edit: 'allow', bash: 'allow' },
    autoupdate: false,
    share: 'disabled',
  });
}

/**
 * A private home for opencode under `dir`, configured for the model at
 * `baseURL` (an OpenAI wire); returns the environment that points opencode at
 * it (and keeps it from updating itself).
 */
export function opencodeHome(dir: string, baseURL: string): Record<string, string> {
  const config = join(dir, '.config');
  mkdirSync(join(config, 'opencode'), { recursive: true });
  writeFileSync(join(config, 'opencode', 'opencode.json'), opencodeConfig(baseURL));
  return {
    HOME: dir,
    XDG_CONFIG_HOME: config,
    XDG_DATA_HOME: join(dir, '.local', 'share'),
    XDG_STATE_HOME: join(dir, '.local', 'state'),
    XDG_CACHE_HOME: join(dir, '.cache'),
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    PATH: nodePath(),
  };
}

/**
 * A private home for gemini-cli under `dir`, for the model at `baseURL` (a
 * Gemini wire): an API key (any will do) and no usage statistics or updates.
 */
export function geminiHome(dir: string, baseURL: string): Record<string, string> {
  mkdirSync(join(dir, '.gemini'), { recursive: true });
  writeFileSync(
    join(dir, '.gemini', 'settings.json'),
    JSON.stringify({
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    }),
  );
  return { HOME: dir, GEMINI_API_KEY: 'scripted', GOOGLE_GEMINI_BASE_URL: baseURL, PATH: nodePath() };
}

/**
 * A private home for Claude Code (claude-agent-acp) under `dir`, for the model
 * at `baseURL` (an Anthropic wire). IS_SANDBOX lets it run as root (CI does).
 */
export function claudeHome(dir: string, baseURL: string): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  return {
    HOME: dir,
    ANTHROPIC_API_KEY: 'scripted',
    ANTHROPIC_BASE_URL: baseURL,
    IS_SANDBOX: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    PATH: nodePath(),
  };
}

/** A describe block's title that says why its tests are skipped, when they are. */
export const titleFor = (title: string, agent: { bin: string } | { skip: string }): string =>
  'skip' in agent ? `${title} (skipped: ${agent.skip})` : title;

/**
 * incrementum.toml's [agent] lines for the product's own `preset` (so its
 * command and arguments are the ones tried), found on PATH at `bin`, with
 * `env`.
 */
export function agentToml(preset: string, bin: string, env: Record<string, string>): string {
  const withBin = { ...env, PATH: `${dirname(bin)}${delimiter}${env.PATH ?? nodePath()}` };
  return (
    `preset = ${JSON.stringify(preset)}\n` +
    'turn-timeout-seconds = 120\n' +
    `env = { ${Object.entries(withBin)
      .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
      .join(', ')} }\n`
  );
}
