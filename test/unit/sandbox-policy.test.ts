// The sandbox policy as data: what is writable, read-only and hidden, for
// which agent, and the bwrap argv it becomes. Pure: no sandbox runs here
// (test/e2e/sandbox.test.ts runs the real one).
import { describe, expect, it } from 'vitest';
import { SandboxSection } from '../../src/model/config.js';
import { bwrapArgs, type PathKind } from '../../src/proc/sandbox/bwrap.js';
import { seatbeltProfile } from '../../src/proc/sandbox/seatbelt.js';
import {
  buildPolicy,
  sandboxEnv,
  settle,
  type Mount,
  type PolicyInput,
} from '../../src/proc/sandbox/policy.js';

const HOME = '/home/u';
const input = (over: Partial<PolicyInput> = {}, sandbox: Record<string, unknown> = {}): PolicyInput => ({
  workspace: '/home/u/.local/state/incrementum/workspaces/r-1/2',
  repoRoot: '/home/u/src/r',
  stateDir: '/home/u/.local/state/incrementum',
  home: HOME,
  env: { HOME },
  agentName: 'opencode',
  git: {
    commonDir: '/home/u/src/r/.git',
    adminDir: '/home/u/src/r/.git/worktrees/2',
    dotGit: '/home/u/.local/state/incrementum/workspaces/r-1/2/.git',
    branchRef: 'refs/heads/incrementum/workspace-2/work',
  },
  config: SandboxSection.parse(sandbox),
  ...over,
});

const access = (mounts: Mount[], path: string) => mounts.find((m) => m.path === path)?.access;

/** What a path ends up as: the deepest mount that covers it, else the read-only root. */
function effective(mounts: Mount[], path: string): string {
  let best: Mount | undefined;
  for (const m of mounts) if (path === m.path || path.startsWith(m.path + '/')) best = m;
  return best?.access ?? 'ro';
}

describe('sandbox policy', () => {
  it('the workspace and the agent state are writable; the checkout, git config and other branches are not', () => {
    const p = buildPolicy(input());
    const ws = '/home/u/.local/state/incrementum/workspaces/r-1/2';
    expect(effective(p.mounts, `${ws}/src/a.ts`)).toBe('rw');
    expect(effective(p.mounts, `${ws}/.git`)).toBe('ro');
    expect(effective(p.mounts, '/tmp/x')).toBe('tmpfs');
    expect(effective(p.mounts, '/home/u/.local/share/opencode/db')).toBe('rw');
    expect(effective(p.mounts, '/home/u/.cache/opencode')).toBe('rw');
    expect(effective(p.mounts, '/home/u/src/r/main.ts')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/config')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/hooks/pre-commit')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/HEAD')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/refs/heads/main')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/packed-refs')).toBe('ro');
    // What a commit on the workspace's branch writes.
    expect(effective(p.mounts, '/home/u/src/r/.git/objects/ab/cdef')).toBe('rw');
    expect(effective(p.mounts, '/home/u/src/r/.git/objects/pack/p.pack')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/worktrees/2/index')).toBe('rw');
    expect(effective(p.mounts, '/home/u/src/r/.git/worktrees/2/commondir')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/worktrees/2/gitdir')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/worktrees/1/index')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/refs/heads/incrementum/workspace-2/work')).toBe('rw');
    expect(effective(p.mounts, '/home/u/src/r/.git/logs/refs/heads/incrementum/workspace-2/work')).toBe('rw');
    // Another workspace's branch is in a folder of its own, under the read-only refs/.
    expect(effective(p.mounts, '/home/u/src/r/.git/refs/heads/incrementum/workspace-1/work')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/logs/refs/heads/incrementum/workspace-1/work')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/refs/heads/incrementum/ws-1')).toBe('ro');
    expect(p.mkdirs).toContain('/home/u/src/r/.git/refs/heads/incrementum/workspace-2');
    // Nothing is mounted over a file of refs/: such a file can be deleted
    // (a landing) while a sandbox is set up, and the mount would then fail.
    expect(p.mounts.filter((m) => m.path.includes('/refs/')).map((m) => m.access)).toEqual(['rw', 'rw']);
  });

  it('hides credentials and incrementum state; [sandbox] hidden adds, readable takes out', () => {
    const p = buildPolicy(input({}, { hidden: ['~/secrets'], readable: ['~/.npmrc'] }));
    for (const h of [
      '/home/u/.ssh',
      '/home/u/.aws',
      '/home/u/.gnupg',
      '/home/u/.config/gh',
      '/home/u/.netrc',
    ])
      expect(effective(p.mounts, h), h).toBe('hidden');
    expect(effective(p.mounts, '/home/u/.ssh/id_rsa')).toBe('hidden');
    expect(effective(p.mounts, '/home/u/secrets/k')).toBe('hidden');
    expect(access(p.mounts, '/home/u/.npmrc')).toBeUndefined();
    expect(effective(p.mounts, '/home/u/.local/state/incrementum/state.db')).toBe('hidden');
    expect(effective(p.mounts, '/home/u/.local/state/incrementum/jobs/x/events.jsonl')).toBe('hidden');
    // The compile cache ii runs its code from, under the otherwise writable ~/.cache.
    expect(effective(p.mounts, '/home/u/.cache/incrementum/compile-cache/x')).toBe('hidden');
    expect(effective(p.mounts, '/home/u/.cache/other-tool/x')).toBe('rw');
    const moved = buildPolicy(input({ env: { HOME, XDG_CACHE_HOME: '/c', NODE_COMPILE_CACHE: '/ncc' } }));
    expect(effective(moved.mounts, '/c/incrementum/compile-cache/x')).toBe('hidden');
    expect(effective(moved.mounts, '/ncc/x')).toBe('hidden');
  });

  it('a branch straight under refs/heads gets no writable folder: that would be every branch', () => {
    const p = buildPolicy(input({ git: { ...input().git!, branchRef: 'refs/heads/feature' } }));
    expect(effective(p.mounts, '/home/u/src/r/.git/refs/heads/main')).toBe('ro');
    expect(effective(p.mounts, '/home/u/src/r/.git/refs/heads/feature')).toBe('ro');
  });

  it("a branch in a folder that is not a workspace's (the user's feature/x, an earlier version's ws-N) gets none either", () => {
    for (const branchRef of ['refs/heads/feature/x', 'refs/heads/incrementum/ws-2']) {
      const p = buildPolicy(input({ git: { ...input().git!, branchRef } }));
      expect(effective(p.mounts, `/home/u/src/r/.git/${branchRef}`), branchRef).toBe('ro');
      expect(
        p.mounts.filter((m) => m.path.includes('/refs/')),
        branchRef,
      ).toEqual([]);
    }
  });

  it('presets: claude, gemini and the scripted agent get their own dirs; [sandbox] writable adds', () => {
    const claude = buildPolicy(input({ agentName: 'claude' }, { writable: ['/opt/cache'] }));
    expect(effective(claude.mounts, '/home/u/.claude/x')).toBe('rw');
    expect(claude.mkfiles).toEqual(['/home/u/.claude.json']);
    expect(effective(claude.mounts, '/opt/cache/y')).toBe('rw');
    expect(effective(claude.mounts, '/home/u/.local/share/opencode')).toBe('ro');
    const gemini = buildPolicy(input({ agentName: 'gemini' }));
    expect(effective(gemini.mounts, '/home/u/.gemini/settings.json')).toBe('rw');
    const scripted = buildPolicy(
      input({ agentName: 'scripted', env: { HOME, II_SCRIPTED_SCENARIO: '/srv/agent/s.json' } }),
    );
    expect(effective(scripted.mounts, '/srv/agent/s.json.state')).toBe('rw');
  });

  it("the agent's own HOME and XDG dirs ([agent] env) decide its state dirs; credentials there are hidden too", () => {
    const p = buildPolicy(input({ agentEnv: { HOME: '/tmp/oc', XDG_DATA_HOME: '/tmp/oc/data' } }));
    expect(effective(p.mounts, '/tmp/oc/data/opencode/x')).toBe('rw');
    expect(effective(p.mounts, '/tmp/oc/.config/opencode/opencode.json')).toBe('rw');
    expect(effective(p.mounts, '/tmp/oc/.ssh/id_rsa')).toBe('hidden');
    expect(effective(p.mounts, '/tmp/oc/notes')).toBe('ro');
    expect(effective(p.mounts, '/home/u/.ssh/id_rsa')).toBe('hidden');
  });

  it('a home or repository in /tmp comes back read-only over the private /tmp; the repository stays read-only under a writable home', () => {
    const p = buildPolicy(
      input(
        {
          home: '/tmp/h',
          repoRoot: '/tmp/h/repo',
          stateDir: '/tmp/h/state/incrementum',
          workspace: '/tmp/h/state/incrementum/workspaces/r/1',
          git: null,
          agentName: 'x',
        },
        { writable: ['~'] },
      ),
    );
    expect(p.mounts.slice(0, 2).map((m) => `${m.access} ${m.path}`)).toEqual(['tmpfs /tmp', 'rw /tmp/h']);
    expect(access(p.mounts, '/tmp/h/.npm')).toBeUndefined(); // writable already
    expect(effective(p.mounts, '/tmp/h/repo/a.ts')).toBe('ro');
    expect(effective(p.mounts, '/tmp/h/repo/.git/config')).toBe('ro');
    expect(effective(p.mounts, '/tmp/h/state/incrementum/state.db')).toBe('hidden');
    expect(effective(p.mounts, '/tmp/h/state/incrementum/workspaces/r/1/a')).toBe('rw');
  });

  it("an agent installed in /tmp stays readable: its program, and its arguments up to its script, options' files included", () => {
    const mounts = (agentCommand: string[]) => buildPolicy(input({ agentCommand })).mounts;
    // The scripted agent from its startup snapshot: node, then the snapshot to start from.
    const snap = mounts([
      '/tmp/n/bin/node',
      '--snapshot-blob',
      '/tmp/pkg/dist/agent/scripted/main.js.snapshot.blob',
    ]);
    expect(effective(snap, '/tmp/n/bin/node')).toBe('ro');
    expect(effective(snap, '/tmp/pkg/dist/agent/scripted/main.js.snapshot.blob')).toBe('ro');
    // A script, then its own arguments: those are not read back from the private /tmp.
    const script = mounts(['/tmp/n/bin/node', '/tmp/pkg/main.js', '/tmp/other/dir']);
    expect(effective(script, '/tmp/pkg/main.js')).toBe('ro');
    expect(effective(script, '/tmp/other/dir/x')).toBe('tmpfs');
  });

  it('settle: parents first, the last word on a path wins, a read-only mount under read-only is dropped', () => {
    expect(
      settle([
        { path: '/a/b', access: 'rw', why: '' },
        { path: '/a', access: 'hidden', why: '' },
        { path: '/c', access: 'ro', why: '' },
        { path: '/a/b', access: 'ro', why: '' },
      ]).map((m) => `${m.access} ${m.path}`),
    ).toEqual(['hidden /a', 'ro /a/b']);
  });

  it('drops credential-looking names unless passed; the agent keeps its model key', () => {
    const env = {
      PATH: '/bin',
      GITHUB_TOKEN: 'g',
      AWS_PROFILE: 'p',
      MY_SECRET: 's',
      DEPLOY_KEY: 'k',
      SSH_AUTH_SOCK: '/tmp/a',
      ANTHROPIC_API_KEY: 'a',
      NPM_TOKEN: 'n',
      LANG: 'C',
    };
    expect(sandboxEnv(env, [])).toEqual({ PATH: '/bin', LANG: 'C' });
    const p = buildPolicy(input({ agentName: 'claude' }, { 'pass-env': ['NPM_TOKEN'] }));
    expect(sandboxEnv(env, p.passEnv)).toEqual({
      PATH: '/bin',
      LANG: 'C',
      ANTHROPIC_API_KEY: 'a',
      NPM_TOKEN: 'n',
    });
  });

  it("drops the store's URL and libpq credentials whatever pass-env or [agent.env] names", () => {
    const env = {
      PATH: '/bin',
      II_DATABASE_URL: 'postgres://ii:hunter2@db/x',
      PGPASSWORD: 'hunter2',
      PGPASSFILE: '/home/u/pw',
      PGSERVICEFILE: '/home/u/svc',
      PGSERVICE: 'ii',
      PGSSLKEY: '/home/u/k',
      PGHOST: 'db',
      GITHUB_TOKEN: 't',
    };
    const names = ['II_DATABASE_URL', 'PGPASSWORD', 'PGPASSFILE', 'PGSERVICEFILE', 'PGSERVICE', 'PGSSLKEY'];
    expect(sandboxEnv(env, [])).toEqual({ PATH: '/bin', PGHOST: 'db' });
    const p = buildPolicy(input({ agentName: 'claude' }, { 'pass-env': names }));
    // (the agent's keep list: what [agent.env] names, acp-session.ts)
    expect(sandboxEnv(env, [...p.passEnv, ...names])).toEqual({ PATH: '/bin', PGHOST: 'db' });
  });

  it("hides the user's incrementum config (the store's URL) and PostgreSQL's password files", () => {
    const p = buildPolicy(input());
    for (const h of [
      '/home/u/.config/incrementum/config.toml',
      '/home/u/.pgpass',
      '/home/u/.pg_service.conf',
      '/home/u/.postgresql/postgresql.key',
    ])
      expect(effective(p.mounts, h), h).toBe('hidden');
    expect(effective(p.mounts, '/home/u/.config/other/x')).toBe('ro');
    const moved = buildPolicy(
      input({
        env: { HOME, XDG_CONFIG_HOME: '/cfg', PGPASSFILE: '/etc/pw', PGSERVICEFILE: '/srv/svc.conf' },
      }),
    );
    for (const h of ['/cfg/incrementum/config.toml', '/etc/pw', '/srv/svc.conf'])
      expect(effective(moved.mounts, h), h).toBe('hidden');
    // [sandbox] readable takes it out, as for any hidden default.
    const named = buildPolicy(input({}, { readable: ['~/.config/incrementum'] }));
    expect(effective(named.mounts, '/home/u/.config/incrementum/config.toml')).toBe('ro');
  });

  it('network "none" and the bwrap argv: namespaces, no capabilities, hidden files over /dev/null, hidden dirs read-only last', () => {
    const p = buildPolicy(input({}, { network: 'none' }));
    const kinds: Record<string, PathKind> = {
      '/home/u/.ssh': 'dir',
      '/home/u/.netrc': 'file',
      '/home/u/.local/state/incrementum': 'dir',
      '/home/u/.local/state/incrementum/workspaces/r-1/2': 'dir',
      '/home/u/.local/state/incrementum/workspaces/r-1/2/.git': 'file',
      '/home/u/src/r/.git': 'dir',
      '/home/u/src/r/.git/objects': 'dir',
    };
    const a = bwrapArgs(p, (path) => kinds[path] ?? null, { disableUserns: true });
    const s = a.join(' ');
    expect(a.slice(0, 2)).toEqual(['--unshare-user', '--disable-userns']);
    for (const flag of ['--unshare-pid', '--die-with-parent', '--cap-drop ALL', '--unshare-net'])
      expect(s).toContain(flag);
    expect(s).toContain('--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp');
    expect(s).toContain('--tmpfs /home/u/.ssh');
    expect(s).toContain('--ro-bind /dev/null /home/u/.netrc');
    expect(s).not.toContain('.aws'); // not there: nothing to hide
    const ws = '/home/u/.local/state/incrementum/workspaces/r-1/2';
    expect(a.indexOf(`--bind-try`)).toBeLessThan(a.indexOf('--remount-ro'));
    expect(s).toContain(`--bind-try ${ws} ${ws}`);
    expect(s).toContain(`--ro-bind-try ${ws}/.git ${ws}/.git`);
    expect(s).toContain('--remount-ro /home/u/.local/state/incrementum');
    expect(a.slice(-2)).toEqual(['--chdir', ws]);
    expect(bwrapArgs(buildPolicy(input()), () => null, { disableUserns: false })).not.toContain(
      '--unshare-net',
    );
  });
});

describe('macOS sandbox-exec profile from the same policy', () => {
  it('denies writes but for the writable paths, hides the hidden ones, later (deeper) rules last', () => {
    const p = buildPolicy(input({}, { network: 'none', hidden: ['~/we"ird'] }));
    const sb = seatbeltProfile(p);
    const lines = sb.split('\n');
    expect(lines.slice(0, 4)).toEqual(['(version 1)', '(allow default)', lines[2], '(deny file-write*)']);
    expect(sb).toContain('(deny network*)');
    expect(sb).toContain('(allow file-read* file-write* (subpath "/tmp") (subpath "/private/tmp"))');
    expect(sb).toContain('(deny file-read* file-write* (subpath "/home/u/.ssh"))');
    expect(sb).toContain('(deny file-read* file-write* (subpath "/home/u/we\\"ird"))');
    const ws = '/home/u/.local/state/incrementum/workspaces/r-1/2';
    const at = (rule: string) => lines.indexOf(rule);
    const hideState = at('(deny file-read* file-write* (subpath "/home/u/.local/state/incrementum"))');
    const openWs = at(`(allow file-read* file-write* (subpath "${ws}"))`);
    const lockDotGit = at(`(deny file-write* (subpath "${ws}/.git"))`);
    expect(hideState).toBeGreaterThan(0);
    expect(openWs).toBeGreaterThan(hideState);
    expect(lockDotGit).toBeGreaterThan(openWs);
    const gitDir = at('(deny file-write* (subpath "/home/u/src/r/.git"))');
    const branchDir = at(
      '(allow file-read* file-write* (subpath "/home/u/src/r/.git/refs/heads/incrementum/workspace-2"))',
    );
    expect(branchDir).toBeGreaterThan(gitDir);
    expect(seatbeltProfile(buildPolicy(input()))).not.toContain('network');
  });
});
