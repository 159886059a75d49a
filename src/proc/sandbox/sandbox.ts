// A job's sandbox: the policy for its workspace and agent, and how a
// command is started inside it. Every process a job starts goes through
// wrap(): the agent (src/agent/acp-session.ts), the setup and the tests
// (src/job/test-runner.ts). `[sandbox] mode` decides what happens where
// bubblewrap cannot run: "auto" runs as before and says so once per process,
// "required" refuses the job with the fix.
import { execFile } from 'node:child_process';
import { lstatSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { packageRoot } from '../../package-root.js';
import { UserError } from '../../errors.js';
import type { Config } from '../../model/config.js';
import { bwrapArgs, type PathKind } from './bwrap.js';
import { gitLayout } from './git-layout.js';
import {
  activeOverlays,
  newWorkDir,
  overlayArgv,
  overlayBlocker,
  overlayFor,
  overlayOptions,
  removeOverlay,
  safeDependencyDir,
  type DependencyOverlay,
  type OverlayTools,
} from './overlay.js';
import { type HostSpec, netHostScript } from './net-spec.js';
import { buildPolicy, sandboxEnv, type SandboxPolicy } from './policy.js';
import { onPath, probeSandbox, type SandboxProbe } from './probe.js';

export interface Wrapped {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

export interface Sandbox {
  /** The policy as of now (the workspace's branch is read afresh: a landing's rebase moves it). */
  policy(): SandboxPolicy;
  /**
   * `command args` as started inside the sandbox, with `env` minus the
   * names that look like credentials (those in `keep`, the policy's
   * pass-env and the agent's own keys stay).
   */
  wrap(command: string, args: readonly string[], env: NodeJS.ProcessEnv, keep?: readonly string[]): Wrapped;
  /**
   * Mounts the checkout's `dir` (node_modules) read-only beneath a fresh
   * upper layer of the workspace's own, at the workspace's `dir`, in every
   * later wrap() ([workspace] reuse = "overlay"). Tried once for real
   * first: a kernel, filesystem or security module that forbids it says so
   * here (and the setup clones instead), not in a failing test.
   */
  overlay(dir: string): Promise<{ ok: true } | { ok: false; reason: string }>;
}

export interface JobSandboxInput {
  config: Config;
  repoRoot: string;
  workspace: string;
  stateDir: string;
  agent: { name: string; command: readonly string[]; env?: Record<string, string> };
  env?: NodeJS.ProcessEnv;
}

/** What `ii doctor` and the warning say about the sandbox here. */
export interface SandboxState {
  mode: Config['sandbox']['mode'];
  probe: SandboxProbe;
  /** One line: whether jobs run sandboxed, and if not the fix. */
  summary: string;
}

export function sandboxState(config: Config, env: NodeJS.ProcessEnv = process.env): SandboxState {
  const mode = config.sandbox.mode;
  if (mode === 'off')
    return {
      mode,
      probe: { ok: false, reason: 'off', fix: '' },
      summary: 'agents not sandboxed: [sandbox] mode = "off"',
    };
  const probe = probeSandbox(env);
  const summary = probe.ok
    ? `agents sandboxed (bubblewrap ${probe.bwrap}): workspace writable, the rest read-only, credentials hidden, network ${networkText(config.sandbox.network)}`
    : `agents not sandboxed: ${probe.reason} — ${probe.fix}`;
  return { mode, probe, summary };
}

const networkText = (n: Config['sandbox']['network']): string =>
  typeof n === 'string' ? n : n.allow.length ? `only ${n.allow.join(', ')}` : 'none (own ports)';

/**
 * Refuses (UserError, with the fix) when the config requires a sandbox this
 * machine cannot give. Called before a job is claimed.
 */
export function requireSandbox(config: Config, env: NodeJS.ProcessEnv = process.env): void {
  if (config.sandbox.mode !== 'required') return;
  const s = sandboxState(config, env);
  if (s.probe.ok) return;
  throw new UserError(
    `[sandbox] mode = "required" but ${s.probe.reason}: no job was started.\nFix: ${s.probe.fix} (or set [sandbox] mode = "auto" to run unsandboxed).`,
  );
}

let warned = false;

/**
 * The line to show once per process when "auto" runs jobs without a
 * sandbox (`ii job do`, `ii run`, the board), else null.
 */
export function sandboxWarning(config: Config, env: NodeJS.ProcessEnv = process.env): string | null {
  if (warned || config.sandbox.mode !== 'auto') return null;
  const s = sandboxState(config, env);
  if (s.probe.ok) return null;
  warned = true;
  return s.summary;
}

/** `unshare` and `mount` (util-linux), which make the overlay bwrap 0.8 cannot. */
function overlayTools(env: NodeJS.ProcessEnv): OverlayTools | null {
  const unshare = onPath('unshare', env);
  const mount = onPath('mount', env);
  return unshare && mount ? { unshare, mount } : null;
}

/** The overlays `wrap` can mount now: the checkout's folder still there, the workspace's a folder (made if missing). */
function mountable(overlays: readonly DependencyOverlay[]): DependencyOverlay[] {
  return overlays.filter((o) => {
    if (kindOf(o.lower) !== 'dir') return false; // the checkout's install is gone: nothing to lay beneath
    try {
      mkdirSync(o.path);
    } catch {}
    // A symlink there (the job's own doing) would carry the mount elsewhere.
    return kindOf(o.path) === 'dir';
  });
}

function kindOf(path: string): PathKind {
  try {
    const st = lstatSync(path);
    return st.isDirectory() ? 'dir' : 'file';
  } catch {
    return null;
  }
}

/** `p` with its symlinks resolved (a mount lands on what the path names), or as given when missing. */
function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * The job's sandbox, or null when it runs without one (mode "off", or
 * "auto" where bubblewrap cannot run). Throws for "required" without one.
 */
export function jobSandbox(i: JobSandboxInput): Sandbox | null {
  const env = i.env ?? process.env;
  if (i.config.sandbox.mode === 'off') return null;
  const probe = probeSandbox(env);
  if (!probe.ok) {
    requireSandbox(i.config, env);
    return null;
  }
  const home = real(env.HOME || homedir());
  const ws = real(i.workspace);
  const root = real(i.repoRoot);
  const state = real(i.stateDir);
  const policy = () =>
    buildPolicy({
      workspace: real(i.workspace),
      repoRoot: real(i.repoRoot),
      stateDir: real(i.stateDir),
      home,
      env,
      agentEnv: i.agent.env ?? {},
      agentName: i.agent.name,
      agentCommand: i.agent.command,
      // net-guest.js runs inside on this node, from this package.
      helpers: typeof i.config.sandbox.network === 'object' ? [dirname(process.execPath), packageRoot()] : [],
      git: gitLayout(i.workspace),
      config: i.config.sandbox,
      overlays: activeOverlays(state, ws, root),
    });
  const tools = overlayTools(env);
  /** `inner` started with the overlays mounted beneath it (overlay.ts). */
  const withOverlays = (overlays: readonly DependencyOverlay[], inner: string[]) =>
    overlayArgv(
      tools!,
      overlays.map((o) => ({ options: overlayOptions(o, newWorkDir(o)), path: o.path })),
      inner,
    );
  return {
    policy,
    async overlay(dir) {
      const d = safeDependencyDir(dir);
      if (!d) return { ok: false, reason: `${dir} is not a folder inside the workspace` };
      if (!tools) return { ok: false, reason: 'unshare or mount (util-linux) not found' };
      const o = overlayFor(state, ws, root, d);
      const blocker = overlayBlocker(o);
      if (blocker) return { ok: false, reason: blocker };
      removeOverlay(o); // a fresh upper layer: nothing of an earlier job's writes
      try {
        mkdirSync(o.upper, { recursive: true });
        mkdirSync(o.workRoot, { recursive: true });
        const [ready] = mountable([o]);
        if (!ready) throw new Error(`the workspace's ${d} is not a folder`);
        const { command, args } = withOverlays([o], ['/bin/true']);
        await new Promise<void>((res, rej) =>
          execFile(command, args, { timeout: 10_000, env: { PATH: env.PATH ?? '' } }, (err, _o, stderr) =>
            err ? rej(new Error(String(stderr).trim() || err.message)) : res(),
          ),
        );
        return { ok: true };
      } catch (err) {
        removeOverlay(o);
        return { ok: false, reason: `overlay mount failed: ${(err as Error).message.split('\n')[0]}` };
      }
    },
    wrap(command, args, childEnv, keep = []) {
      const p = policy();
      // A writable folder needs a source: the agent's state dir on its
      // first run, the branch's ref folder before its first commit.
      for (const d of p.mkdirs)
        try {
          mkdirSync(d, { recursive: true });
        } catch {} // unwritable: it is then simply not writable inside either
      for (const file of p.mkfiles)
        try {
          writeFileSync(file, '{}\n', { flag: 'wx', mode: 0o600 });
        } catch {} // there already (EEXIST), or cannot be made: not writable inside
      const overlays = tools ? mountable(p.overlays) : [];
      const env = { ...sandboxEnv(childEnv, [...p.passEnv, ...keep]), TMPDIR: '/tmp' };
      // Under an overlay bwrap starts as root of unshare's namespace: give it the user's own ids back.
      const ids = overlays.length ? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 } : null;
      const args0 = bwrapArgs(p, kindOf, { disableUserns: probe.disableUserns, ...(ids ? { ids } : {}) });
      // An allow list: net-host.js starts bwrap itself, beside the proxy it
      // serves, and ends with it (the caller's process group holds both).
      const inner =
        p.network === 'host' || p.network === 'none'
          ? [probe.bwrap, ...args0, '--', command, ...args]
          : [
              process.execPath,
              netHostScript(),
              JSON.stringify({
                bwrap: probe.bwrap,
                bwrapArgs: args0,
                allow: p.network.allow,
              } satisfies HostSpec),
              '--',
              command,
              ...args,
            ];
      if (overlays.length === 0) return { command: inner[0]!, args: inner.slice(1), env };
      return { ...withOverlays(overlays, inner), env };
    },
  };
}
