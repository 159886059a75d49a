// A repo, a private state dir and the built `ii` for end-to-end tests of
// `ii job do`: run it to the end or spawn it to interrupt it, read the job
// back as JSON, and find what its agent sessions were asked.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { II, ii, type RunResult } from './cli.js';
import { gitRepo, tempDir } from './tmp.js';
import { testEnv } from './env.js';

export interface JobJson {
  id: string;
  status: string;
  stage: string;
  failure_reason: string | null;
  retried_from: string | null;
  workspace_path: string | null;
  session_id: string;
  base_rev: string | null;
  changes: {
    change_id: string;
    commits: {
      commit_id: string;
      tests_passed: boolean | null;
      review: { outcome: string; comments: string } | null;
      files: { path: string }[];
      feedback: string | null;
    }[];
  }[];
  project_review: { outcome: string; comments: string } | null;
  agent_sessions: { purpose: string; transcript: string }[];
}

export interface WorkspaceJson {
  path: string;
  status: string;
  session_status: string | null;
}

export const write = (path: string, content: string) => ({ type: 'write', path, content });
export const verdict = (v: string, text: string) => ({ actions: [{ type: 'feedback', verdict: v, text }] });
export const delay = (ms: number) => ({ actions: [{ type: 'delay', ms }] });

export const jobIdFrom = (stderr: string) => /job ([0-9a-f]+) for todo/.exec(stderr)?.[1] ?? '';

/** A spawned `ii job do` whose stderr is collected as it comes. */
export interface RunningJob {
  child: ChildProcess;
  stderr: () => string;
  stdout: () => string;
  exit: Promise<number | null>;
}

export class JobFixture {
  readonly tmp: ReturnType<typeof tempDir>;
  readonly env: NodeJS.ProcessEnv;
  repo = '';

  constructor(prefix = 'ii-job-') {
    this.tmp = tempDir(prefix);
    this.env = testEnv(this.tmp.path);
  }

  /** A git repo whose incrementum.toml runs `tests`; `agent` and `job` are extra TOML lines. */
  setup(tests: string[] = ['test -f README.md'], o: { agent?: string; job?: string } = {}): string {
    this.repo = join(this.tmp.path, 'repo');
    mkdirSync(this.repo, { recursive: true });
    const toml =
      `[agent]\n${o.agent ?? 'preset = "scripted"\n'}\n` +
      `[job]\ntest-commands = ${JSON.stringify(tests)}\nauto-commit = false\n${o.job ?? ''}`;
    gitRepo(this.repo, { 'README.md': '# r\n', 'incrementum.toml': toml });
    return this.repo;
  }

  /** Writes a scripted-agent scenario and returns its path. */
  scenario(name: string, s: unknown): string {
    const p = join(this.tmp.path, `${name}.json`);
    writeFileSync(p, JSON.stringify(s));
    return p;
  }

  private envWith(scenarioPath?: string): NodeJS.ProcessEnv {
    return { ...this.env, ...(scenarioPath ? { II_SCRIPTED_SCENARIO: scenarioPath } : {}) };
  }

  run(args: string[], scenarioPath?: string): RunResult {
    return ii(args, { cwd: this.repo, env: this.envWith(scenarioPath) });
  }

  /** Starts `ii job do <args>` in the background. */
  spawn(args: string[], scenarioPath?: string): RunningJob {
    const child = spawn(process.execPath, [II, ...args], {
      cwd: this.repo,
      env: { ...process.env, NO_COLOR: '1', ...this.envWith(scenarioPath) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    let out = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const exit = new Promise<number | null>((res) => child.on('close', res));
    return { child, stderr: () => err, stdout: () => out, exit };
  }

  /** `run` without blocking this process (needed when the test itself serves the agent's model). */
  async runAsync(args: string[], scenarioPath?: string): Promise<RunResult> {
    const j = this.spawn(args, scenarioPath);
    const code = await j.exit;
    return { code: code ?? -1, stdout: j.stdout(), stderr: j.stderr() };
  }

  show(id: string): JobJson {
    return JSON.parse(this.run(['job', 'show', id, '--json']).stdout) as JobJson;
  }

  todos(status: string): unknown[] {
    return JSON.parse(this.run(['todo', 'list', '--json', '--status', status]).stdout) as unknown[];
  }

  workspaces(): WorkspaceJson[] {
    return JSON.parse(this.run(['workspace', 'list', '--json']).stdout) as WorkspaceJson[];
  }

  git(...args: string[]): string {
    return execFileSync('git', args, { cwd: this.repo, encoding: 'utf8' });
  }

  cleanup(): void {
    this.tmp.cleanup();
  }
}

/** The prompt texts a transcript (JSONL of ACP messages) shows were sent to the agent. */
export function promptsSent(transcript: string): string[] {
  const out: string[] = [];
  for (const line of readFileSync(transcript, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line) as {
      dir?: string;
      message?: { method?: string; params?: { prompt?: { type: string; text?: string }[] } };
    };
    if (rec.dir !== 'out' || rec.message?.method !== 'session/prompt') continue;
    out.push((rec.message.params?.prompt ?? []).map((p) => p.text ?? '').join(''));
  }
  return out;
}
