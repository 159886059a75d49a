// The body of ii doctor (definition in index.ts).
import {
  checkConfig,
  checkGit,
  checkNode,
  checkSandbox,
  checkState,
  type CheckResult,
} from '../../doctor/checks.js';
import { checkIdentity, checkRepo, checkTemplates } from '../../doctor/repo-checks.js';
import type { Config } from '../../model/config.js';
import { stateDir } from '../../state/index.js';
import { shownText } from '../../text/shown.js';
import { printJson, style } from '../format.js';
import type { DoctorOptions } from './options.js';

export async function doctor(o: DoctorOptions): Promise<void> {
  const results: CheckResult[] = [checkNode(), checkGit(), checkState(stateDir())];
  const repo = checkRepo(process.cwd());
  results.push(repo.result);
  let config: Config | null = null;
  let configLoaded = false;
  // A setup whose inputs a workspace lacks fails in every job: said once, as
  // the config's finding, and --tests does not run it to fail a second time.
  let setupBroken = false;
  if (repo.root) {
    const c = checkConfig(repo.root);
    if (c.result.ok && c.config) {
      const { checkSetupInputs } = await import('../../doctor/setup-check.js');
      const { GitVcs } = await import('../../vcs/git.js');
      const inputs = await checkSetupInputs(new GitVcs(), repo.root, c.config);
      if (inputs) [c.result, setupBroken] = [inputs, true];
    }
    results.push(c.result);
    config = c.config;
    configLoaded = c.config !== null;
    results.push(checkIdentity(repo.root), checkTemplates(repo.root));
  }
  // A shared store (II_DATABASE_URL, [state] url): its connection, schema and remote.
  const { checkSharedStore } = await import('../../doctor/store-check.js');
  results.push(...(await checkSharedStore(repo.root)));
  // One cause, one finding: a config that cannot be loaded says nothing about
  // the agent it would have named (the defaults' agent would be a red herring).
  if (configLoaded || o.agent || !repo.root) results.push(...(await agentChecks(config, o.agent)));
  if (configLoaded || !repo.root) results.push(checkSandbox(config ?? (await defaults())));
  if (o.tests && !setupBroken) results.push(...(await testsChecks(repo.root, config, Boolean(o.json))));
  const failed = results.filter((r) => !r.ok).length;
  if (o.json) printJson(results);
  else {
    const s = style();
    // A detail can quote what the agent printed: shown escaped and redacted.
    // Multi-line details and fixes keep their lines (a TOML error's code
    // frame, two commands to run), indented under the first.
    const pad = ' '.repeat(15);
    const indent = (text: string, first: string, rest: string) =>
      (
        first +
        text
          .trimEnd()
          .split('\n')
          .join('\n' + rest)
      ).replace(/ +$/gm, '');
    for (const r of results) {
      const head = `${r.ok ? s.green('ok  ') : s.red('FAIL')} ${r.name.padEnd(9)} `;
      process.stdout.write(indent(shownText(r.detail), head, pad) + '\n');
      if (!r.ok && r.fix) process.stdout.write(indent(shownText(r.fix), pad + '→ ', pad + '  ') + '\n');
    }
    process.stdout.write(
      failed === 0
        ? `Everything looks right${o.tests ? '' : ' (`ii doctor --tests` also runs the setup and the tests)'}.\n`
        : `${failed} problem${failed === 1 ? '' : 's'} to fix.\n`,
    );
  }
  if (failed > 0) process.exitCode = 1;
}

const defaults = async () => (await import('../../model/config.js')).Config.parse({});

/** The agent's binary and an ACP handshake with it; the config's agent unless --agent names one. */
async function agentChecks(config: Config | null, override?: string): Promise<CheckResult[]> {
  const { Config } = await import('../../model/config.js');
  const { checkAgent } = await import('../../doctor/agent-check.js');
  return checkAgent(config ?? Config.parse({}), override);
}

/** --tests: setup and the test commands in a scratch workspace; Ctrl-C stops them and cleans up. */
async function testsChecks(
  root: string | null,
  config: Config | null,
  quiet: boolean,
): Promise<CheckResult[]> {
  if (!root || !config) return []; // the repo or config finding above says why
  if (config.job['test-commands'].length === 0) return [];
  const { checkTests } = await import('../../doctor/tests-check.js');
  const { GitVcs } = await import('../../vcs/git.js');
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await checkTests({
      root,
      config,
      vcs: new GitVcs(),
      signal: abort.signal,
      ...(quiet ? {} : { onProgress: (l: string) => process.stderr.write(`… ${l}\n`) }),
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
