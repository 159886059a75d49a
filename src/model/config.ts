// What incrementum.toml may hold, with its defaults: the schema the loader
// (src/job/config.ts) checks each file against. Here, below the agent and job
// layers, because both read it (the agent section picks the agent).
import { z } from 'zod';
import { ALLOW_ENTRY_HELP, parseAllowEntry } from './net-allow.js';
import { DEFAULT_RUN_NICE, MAX_NICE, NICE_HELP } from './nice.js';
import { StateSection } from './store-config.js';

/** [agent] permissions (README, "When an agent asks"). */
export const PERMISSION_MODES = ['workspace', 'ask', 'ask-commands'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** "90s", "30m", "1h30m", "500ms" (or a bare number of seconds) in ms; null when it is none of these. */
export function parseDuration(text: string): number | null {
  const t = text.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  const re = /(\d+(?:\.\d+)?)\s*(ms|min|s|m|h)/gy;
  let ms = 0;
  let at = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    const unit = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 }[m[2] as 'ms'];
    ms += Number(m[1]) * unit;
    at = re.lastIndex;
    while (t[at] === ' ') at++;
    re.lastIndex = at;
  }
  return at === t.length && at > 0 ? Math.round(ms) : null;
}

const AgentSection = z
  .object({
    /** A preset name: opencode, claude, gemini, codex, scripted. */
    preset: z.string().min(1).optional(),
    /** argv of an ACP agent over stdio; wins over preset. */
    command: z.array(z.string().min(1)).min(1).optional(),
    env: z.record(z.string(), z.string()).default({}),
    /** Longest one prompt turn may take before it is cancelled. */
    'turn-timeout-seconds': z.number().positive().default(1800),
    /**
     * Most one prompt turn may add to its transcript, in MB (MiB; fractions
     * allowed): past it the turn's first half and its last part are kept,
     * with a line saying what was dropped between them.
     */
    'transcript-max-mb': z
      .number({ error: 'must be a number of megabytes, e.g. 32 or 0.5' })
      .min(0.1, { error: 'must be at least 0.1 (MB): the first half keeps the prompt' })
      .max(1024 * 1024, { error: 'must be at most 1048576 (MB, a terabyte)' })
      .default(32),
    /**
     * Who answers the agent's permission requests: "workspace" allows what
     * stays inside the workspace; "ask" sends each of those to a person;
     * "ask-commands" sends shell commands (execute) to a person and allows
     * the rest inside the workspace. Outside the workspace is always refused.
     */
    permissions: z.enum(PERMISSION_MODES).default('workspace'),
    /** What never goes to a person (agent/permission-policy.ts). */
    allow: z
      .object({
        /** Command prefixes, whole words: "npm test" lets "npm test -- -t x" through, not "npm tests". */
        commands: z.array(z.string().trim().min(1)).default([]),
        /** ACP tool kinds: read, edit, delete, move, search, execute, think, fetch, switch_mode, other. */
        kinds: z.array(z.string().trim().min(1)).default([]),
      })
      .strict()
      .default({ commands: [], kinds: [] }),
    /** How long a request waits for a person before it is rejected, in ms ("30m", "90s", or seconds as a number). */
    'ask-timeout': z
      .union([z.number().positive(), z.string()])
      .transform((v, ctx) => {
        const ms = typeof v === 'number' ? v * 1000 : parseDuration(v);
        if (ms === null || ms <= 0) {
          ctx.addIssue({
            code: 'custom',
            message: 'must be a duration such as "30m", "90s", "1h" or a number of seconds',
          });
          return z.NEVER;
        }
        return ms;
      })
      .default(30 * 60 * 1000),
  })
  .strict();

const JobSection = z
  .object({
    'test-commands': z.array(z.string().min(1)).default([]),
    /** Iterations (commits) one change may take before the job fails. */
    'max-iterations': z.number().int().positive().default(8),
    /** Changes one job may make before it fails. */
    'max-changes': z.number().int().positive().default(10),
    'auto-commit': z.boolean().default(true),
    /** A test command running longer than this has its process group ended and fails. */
    'test-timeout-seconds': z.number().positive().default(1800),
    /**
     * Run the test commands once on the untouched base before the first
     * prompt: a project whose tests already fail stops the job before it
     * spends an agent turn (`--allow-failing-baseline` runs it anyway).
     */
    'baseline-tests': z.boolean().default(true),
  })
  .strict();

const WorkspaceSection = z
  .object({
    /** Files git ignores that a new workspace needs (e.g. ".env"), copied from the repo root. */
    copy: z.array(z.string().min(1)).default([]),
    /**
     * Commands (through a shell, in order) that make a new workspace able to
     * run the tests, e.g. ["npm ci"]; again whenever a lockfile changed.
     */
    setup: z.array(z.string().min(1)).default([]),
    /**
     * A setup command that is a package manager's install (npm ci, ...) is
     * replaced by the checkout's dependencies when the lockfiles match:
     * "overlay" (in the sandbox: the checkout's folder read-only beneath a
     * layer of the workspace's own, in milliseconds; without the sandbox it
     * clones, saying so), "clone" (copy-on-write where the filesystem can,
     * else a copy), "hardlink" (fastest copy; shares files with the
     * checkout), or "off".
     */
    reuse: z.enum(['overlay', 'clone', 'hardlink', 'off']).default('overlay'),
  })
  .strict();

const RunSection = z
  .object({
    /** Jobs `ii run` keeps running at once (--jobs wins). */
    jobs: z.number().int().positive().default(2),
    /** Failed or abandoned jobs after which `ii run` leaves a todo alone until `ii todo reopen`. */
    'max-attempts': z.number().int().positive().default(2),
    /**
     * How much lower than `ii run` its job runners run (their nice value
     * raised by this, as nice(1) -n; everything a runner starts inherits
     * it): a person's board, editor and shell come first when the cores
     * are contended. 0: as `ii run` itself (--nice wins).
     */
    nice: z
      .number({ error: NICE_HELP })
      .int({ error: NICE_HELP })
      .min(0, { error: NICE_HELP })
      .max(MAX_NICE, { error: NICE_HELP })
      .default(DEFAULT_RUN_NICE),
  })
  .strict();

/** `ii job land`: where a finished job's commits go. */
export const LandSection = z
  .object({
    /** The branch to land on; unset: the branch the job's base came from. */
    onto: z.string().min(1).optional(),
    /**
     * A rebase that conflicts: "agent" hands it back to the job's agent as a
     * resolve-conflicts change, tested and reviewed, then lands; "stop"
     * leaves it rebase-in-progress for a person (ii job land --continue / --abort).
     */
    'on-conflict': z.enum(['agent', 'stop']).default('agent'),
    /**
     * Push the landed branch to [remote] name too, by compare-and-swap
     * (--force-with-lease), before the local branch moves. Unset: as
     * [remote] push (src/model/remote.ts).
     */
    push: z.boolean().optional(),
  })
  .strict();

/**
 * The git remote jobs share their commits through when runners on several
 * machines share one store (src/model/remote.ts decides when it is used).
 */
export const RemoteSection = z
  .object({
    /** The remote's name in the repository (`git remote`). */
    name: z.string().min(1).default('origin'),
    /**
     * Push each iteration's refs and each change's final commit under
     * refs/incrementum/ as they are made, and fetch a job's refs when a diff
     * or a landing needs them. Unset: on when the store is PostgreSQL.
     */
    push: z.boolean().optional(),
    /** A push or fetch running longer than this is ended (the job goes on). */
    'timeout-seconds': z.number().positive().default(60),
  })
  .strict();
export type RemoteSection = z.infer<typeof RemoteSection>;

/** An absolute path, or one under the home dir (`~/...`). */
const SandboxPath = z
  .string()
  .min(1)
  .refine((p) => p.startsWith('/') || p === '~' || p.startsWith('~/'), {
    error: 'must be an absolute path or start with ~/',
  });

/** The OS sandbox every process of a job runs in (src/proc/sandbox). */
export const SandboxSection = z
  .object({
    /**
     * "auto": sandboxed where bubblewrap can run, else as before with a
     * warning; "required": a job refuses to start without it; "off": never.
     */
    mode: z.enum(['auto', 'required', 'off']).default('auto'),
    /** More folders the agent may write (its own state, a cache). */
    writable: z.array(SandboxPath).default([]),
    /** More paths hidden from the job (shown empty). */
    hidden: z.array(SandboxPath).default([]),
    /** Paths taken out of the hidden list (e.g. "~/.npmrc" for a private registry). */
    readable: z.array(SandboxPath).default([]),
    /** Environment names passed although they look like credentials (*_TOKEN, *_KEY, AWS_*, ...). */
    'pass-env': z.array(z.string().min(1)).default([]),
    /**
     * "host": the host's network (the agent must reach its model); "none": no
     * network at all; `{ allow = [...] }`: a network namespace of its own
     * (its own ports) that reaches only those hosts, through a proxy.
     */
    network: z
      .union([
        z.enum(['host', 'none']),
        z
          .object({
            allow: z.array(
              z.string().refine((e) => parseAllowEntry(e) !== null, { error: ALLOW_ENTRY_HELP }),
            ),
          })
          .strict(),
      ])
      .default('host'),
  })
  .strict();
export type SandboxSection = z.infer<typeof SandboxSection>;

/** How the dashboard tells a person that a job waits for them (a permission request). */
export const NotifySection = z
  .object({
    /** Ring the terminal's bell once per request that starts waiting. */
    bell: z.boolean().default(true),
    /**
     * argv run once per request that starts waiting (no shell), with
     * II_JOB_ID, II_TODO_TITLE and II_QUESTION in its environment, e.g.
     * ["notify-send", "incrementum: a job needs you"]; ended after 10 s.
     */
    command: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict();
export type NotifySection = z.infer<typeof NotifySection>;

export const Config = z
  .object({
    agent: AgentSection.default(AgentSection.parse({})),
    job: JobSection.default(JobSection.parse({})),
    workspace: WorkspaceSection.default(WorkspaceSection.parse({})),
    run: RunSection.default(RunSection.parse({})),
    land: LandSection.default(LandSection.parse({})),
    remote: RemoteSection.default(RemoteSection.parse({})),
    sandbox: SandboxSection.default(SandboxSection.parse({})),
    notify: NotifySection.default(NotifySection.parse({})),
    state: StateSection.default(StateSection.parse({})),
  })
  .strict();
export type Config = z.infer<typeof Config>;
