// ii doctor --tests: what a job would see before its first prompt, without a
// job. A scratch worktree of the base revision (outside the state dir, so no
// job can claim it), [workspace] setup there, then the test commands; the
// worktree is removed afterwards, whatever happened.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../model/config.js';
import { runTests } from '../job/test-runner.js';
import { OutputTail, setupWorkspace } from '../job/workspace-setup.js';
import { LEFTOVERS_FIX, namedPaths } from '../job/leftovers.js';
import type { TestResult } from '../model/job.js';
import { checkCopies, copyInto } from '../session/copy.js';
import { redact } from '../text/redact.js';
import type { Vcs } from '../vcs/vcs.js';
import { git } from '../vcs/git-run.js';
import type { CheckResult } from './checks.js';
import { ReadOnlyWrites } from '../proc/sandbox/read-only-hint.js';
import { jobSandbox, type Sandbox } from '../proc/sandbox/sandbox.js';
import { stateDir } from '../state/paths.js';
import { removeOverlays } from '../proc/sandbox/overlay.js';

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const ran = (rs: TestResult[]) => rs.map((r) => `${r.command} (${secs(r.duration_ms)})`).join(', ');

export async function checkTests(o: {
  root: string;
  config: Config;
  /** The repository's git (a GitVcs from the CLI). */
  vcs: Vcs;
  signal?: AbortSignal;
  /** Progress for a person waiting (setup can take minutes). */
  onProgress?: (line: string) => void;
}): Promise<CheckResult[]> {
  const { root, config } = o;
  const { vcs } = o;
  let base: string;
  let from: string;
  try {
    ({ sha: base, ref: from } = await vcs.resolveBase(root));
  } catch (err) {
    return [
      { name: 'tests', ok: false, detail: (err as Error).message.split('\n')[0] ?? '', fix: 'See above.' },
    ];
  }
  const dir = mkdtempSync(join(tmpdir(), 'ii-doctor-ws-'));
  const ws = join(dir, 'ws');
  const timeoutMs = config.job['test-timeout-seconds'] * 1000;
  const out: CheckResult[] = [];
  try {
    await git(root, ['worktree', 'add', '--quiet', '--detach', ws, base]);
    copyInto(root, ws, await checkCopies(root, config.workspace.copy));
    o.onProgress?.(`scratch workspace ${ws} at ${base.slice(0, 10)} (${from})`);
    // In the sandbox a job's setup and tests would run in: what passes here passes there.
    let sandbox: Sandbox | null = null;
    try {
      sandbox = jobSandbox({
        config,
        repoRoot: root,
        workspace: ws,
        stateDir: stateDir(),
        agent: { name: '', command: [] },
      });
    } catch {} // required but unavailable: the sandbox check says so; the tests still say what they say
    const tail = new OutputTail();
    const readOnly = new ReadOnlyWrites();
    const reused: string[] = [];
    const setup = await setupWorkspace({
      workspace: ws,
      checkout: root,
      commands: config.workspace.setup,
      reuse: config.workspace.reuse,
      timeoutMs,
      sandbox,
      ...(o.signal ? { signal: o.signal } : {}),
      onStart: (c) => {
        tail.reset();
        o.onProgress?.(`setup: ${c}`);
      },
      onOutput: (_c, _s, text) => {
        tail.add(text);
        if (sandbox) readOnly.add(text);
      },
      onReuse: (u) =>
        reused.push(
          `${u.dir} from the checkout instead of \`${u.command}\` (${u.method}, ${u.duration_ms} ms)`,
        ),
    });
    if (setup.kind === 'aborted') return [...out, { name: 'setup', ok: false, detail: 'interrupted' }];
    if (setup.kind === 'failed') {
      out.push({
        name: 'setup',
        ok: false,
        detail: `\`${setup.failed.command}\` exited ${setup.failed.exit_code}${setup.tail ? `:\n${redact(setup.tail)}` : ''}`,
        fix:
          'A job would fail here, before its first prompt. Fix [workspace] setup in incrementum.toml (it runs through a shell in a fresh worktree of the base revision).' +
          (readOnly.hint() ? ` ${readOnly.hint()}` : ''),
      });
      return out;
    }
    const setupDetail =
      setup.kind === 'skipped'
        ? 'no [workspace] setup (a fresh worktree has no node_modules, .venv, …)'
        : [...reused, ...(setup.results.length ? [`ran ${ran(setup.results)}`] : [])].join('; ');
    out.push({ name: 'setup', ok: true, detail: setupDetail });

    const tails = new Map<string, OutputTail>();
    const run = await runTests({
      commands: config.job['test-commands'],
      cwd: ws,
      timeoutMs,
      sandbox,
      ...(o.signal ? { signal: o.signal } : {}),
      onStart: (c) => {
        tails.set(c, new OutputTail());
        o.onProgress?.(`test: ${c}`);
      },
      onOutput: (c, _s, text) => {
        tails.get(c)?.add(text);
        if (sandbox) readOnly.add(text);
      },
    });
    if (run.aborted) return [...out, { name: 'tests', ok: false, detail: 'interrupted' }];
    if (run.passed) {
      out.push({ name: 'tests', ok: true, detail: `pass on ${base.slice(0, 10)}: ${ran(run.results)}` });
      const left = await vcs.uncommittedPaths(ws);
      if (left.length)
        out.push({
          name: 'workspace',
          ok: false,
          detail: `setup and tests leave files git does not ignore: ${namedPaths(left)}`,
          fix: `A job would stop here before any agent turn. ${LEFTOVERS_FIX}`,
        });
      return out;
    }
    const failed = run.results.filter((r) => r.exit_code !== 0);
    const first = tails.get(failed[0]!.command)?.excerpt() ?? '';
    out.push({
      name: 'tests',
      ok: false,
      detail:
        `fail on ${base.slice(0, 10)}, before any change: ${failed.map((r) => `\`${r.command}\` exited ${r.exit_code}`).join(', ')}` +
        (first ? `:\n${redact(first)}` : ''),
      fix: readOnly.hint()
        ? `A job would stop here before any agent turn. ${readOnly.hint()}`
        : config.workspace.setup.length === 0
          ? 'A job would stop here before any agent turn. If a dependency is missing, set [workspace] setup (`ii init --print` shows the one your lockfile needs); else fix the tests, or run jobs with --allow-failing-baseline.'
          : 'A job would stop here before any agent turn. Fix the tests on the base, or run jobs with --allow-failing-baseline.',
    });
    return out;
  } catch (err) {
    out.push({ name: 'tests', ok: false, detail: `could not run: ${(err as Error).message.split('\n')[0]}` });
    return out;
  } finally {
    await git(root, ['worktree', 'remove', '--force', '--force', ws]).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    removeOverlays(stateDir(), ws);
    await git(root, ['worktree', 'prune']).catch(() => {});
  }
}
