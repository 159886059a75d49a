// What the job sandbox adds to each process a job starts (src/proc/sandbox):
// bubblewrap's namespaces and mounts before the command runs. Measured as a
// spawn to exit of `true` (the floor: a bare spawn) and of node (an agent's
// start), each unsandboxed and inside a job's sandbox (a real worktree, the
// scripted agent's policy), interleaved so load hits both alike. Goal (issue
// 28): median added ≤ 30 ms per agent spawn. With `network = { allow }` each
// spawn also starts the proxy outside and the guest inside (two node
// processes): its row says what that costs.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, round, timeMs } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { jobSandbox } = await import(join(root, 'dist', 'src', 'proc', 'sandbox', 'sandbox.js'));
const { probeSandbox } = await import(join(root, 'dist', 'src', 'proc', 'sandbox', 'probe.js'));
const { Config } = await import(join(root, 'dist', 'src', 'model', 'config.js'));

const run1 = (command, args, cwd, env) =>
  new Promise((resolve, reject) => {
    const c = spawn(command, args, { cwd, env, stdio: 'ignore' });
    c.on('error', reject);
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}`))));
  });

export async function run() {
  const probe = probeSandbox();
  if (!probe.ok) return [{ name: 'skipped', value: probe.reason, unit: '', goal: probe.fix }];
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-sandbox-'));
  try {
    const repo = join(tmp, 'repo');
    mkdirSync(repo);
    const git = (cwd, ...args) => execFileSync('git', args, { cwd, stdio: 'pipe' });
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    git(repo, 'add', 'a.txt');
    git(repo, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'a');
    const stateDir = join(tmp, 'state', 'incrementum');
    const ws = join(stateDir, 'workspaces', 'r', '1');
    git(repo, 'worktree', 'add', '-q', '-b', 'incrementum/workspace-1/work', ws);
    const sandbox = jobSandbox({
      config: Config.parse({}),
      repoRoot: repo,
      workspace: ws,
      stateDir,
      agent: { name: 'opencode', command: ['opencode', 'acp'] },
    });
    const allowList = jobSandbox({
      config: Config.parse({ sandbox: { network: { allow: ['127.0.0.1:4000'] } } }),
      repoRoot: repo,
      workspace: ws,
      stateDir,
      agent: { name: 'opencode', command: ['opencode', 'acp'] },
    });
    const env = process.env;
    const timings = { bare: [], bareSb: [], node: [], nodeSb: [], nodeAllow: [] };
    const node = [process.execPath, ['-e', '0']];
    const tru = ['/bin/true', []];
    const once = async (key, [cmd, args], boxed) => {
      const w = boxed ? boxed.wrap(cmd, args, env) : { command: cmd, args, env };
      timings[key].push(await timeMs(() => run1(w.command, w.args, ws, w.env)));
    };
    for (let i = 0; i < 3; i++) await once('bareSb', tru, sandbox); // warm the page cache
    for (let i = 0; i < 30; i++) {
      await once('bare', tru, null);
      await once('bareSb', tru, sandbox);
      await once('node', node, null);
      await once('nodeSb', node, sandbox);
      if (i % 3 === 0) await once('nodeAllow', node, allowList); // slower: a third as many
    }
    const m = Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, median(v)]));
    const mounts = sandbox.policy().mounts.length;
    return [
      { name: 'spawn true, unsandboxed', value: round(m.bare), unit: 'ms', goal: '(the floor)' },
      {
        name: `spawn true, sandboxed (${mounts} mounts)`,
        value: round(m.bareSb),
        unit: 'ms',
        floor: round(m.bare),
        ratio: round(m.bareSb / m.bare),
        goal: '',
      },
      { name: 'spawn node -e 0, unsandboxed', value: round(m.node), unit: 'ms', goal: '(an agent start)' },
      {
        name: 'spawn node -e 0, sandboxed',
        value: round(m.nodeSb),
        unit: 'ms',
        floor: round(m.node),
        ratio: round(m.nodeSb / m.node),
        goal: '',
      },
      {
        name: 'added per agent spawn (median)',
        value: round(m.nodeSb - m.node),
        unit: 'ms',
        goal: '≤ 30 ms',
      },
      {
        name: 'spawn node -e 0, sandboxed with network = { allow }',
        value: round(m.nodeAllow),
        unit: 'ms',
        floor: round(m.node),
        ratio: round(m.nodeAllow / m.node),
        goal: '(proxy + guest: two more node starts)',
      },
    ];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
