// The backlog's hand-over: with `ii run` busy on a backlog, the time from one
// job's end (its record's completed_at) to the next job's first prompt sent to
// its agent (the first session/prompt in its first transcript). The real CLI
// runs N todos on the scripted agent in a real git repository, with --jobs 1
// and --jobs 2; everything is read back from the records afterwards.
//
// "Excluding the workspace's own setup" takes out what a project's workspace
// costs and the runner cannot: the worktree (git worktree add, or the reset
// of a free one), the [workspace] setup commands or their node_modules reuse,
// and the baseline test run; each as recorded by the job's events. With
// --jobs 2 the i-th job to end frees the slot the (2+i)-th job to start takes.
//
// Phases of a hand-over (where the time goes):
//   exit       completed_at → the next runner's spawn, or its todo handed to
//              the standby runner (the time in its log's name): the scheduler noticing
//   boot       spawn/hand-over → the claim (started_at): module load, config, checks;
//              with a standby (two while todos wait: src/backlog/scheduler.ts)
//              the load was done before, unless the standby is still loading
//   workspace  the claim → the workspace made (the `workspace` event)
//   prepare    setup + reuse + baseline, as recorded
//   agent      agent_start → its first prompt: spawn, ACP initialize, session/new;
//              the first implement agent is started as the workspace is made
//              (after [workspace] setup when there is one, as the baseline tests
//              start; in a free workspace kept for reuse, as it is claimed,
//              session/new waiting for the reset) and recorded (agent_start) at
//              its turn, so this is what is left of its start once the steps
//              before its turn are done. Started beside the reset, it also
//              takes cores from it: the workspace phase it overlaps is then
//              longer, and the row excluding the workspace takes that out with
//              it, so the whole hand-over's row is the one that says whether
//              the overlap gained anything
//   other      the rest (store writes, events, templates)
// The floor, measured in the same run: `node -e 0`, the least a new process costs.
//
// Steps: each process on the way writes marks (src/proc/trace.ts, II_TRACE):
// the previous runner at its job's end and after its clean-up and journal,
// ii run at the hand-over, the next runner at each step to its first prompt
// (with its CPU time), and the agent's spawn, ACP initialize (with the CPU
// its processes took to answer it, from /proc) and session/new.
// Rows "step …" are the medians of each step's time; "cpu …" the next
// runner's own CPU time from the hand-over to its prompt, which the load
// moves less than the wall clock. With HANDOVER_CPU_STEPS set, each step's
// CPU and its wait for a core too (its process's main thread on a run
// queue, Linux): the rest of its time it waited on a child, the disk or a lock.
//
// "Another job's end" says how often a hand-over had the cores to itself:
// with --jobs 2 the two slots' jobs, of one length here, end within a few
// hundred ms of each other, so most hand-overs run beside the other slot's.
//
// HANDOVER_AGENT_MS=1500 holds each job's implement turn that long (the
// scripted agent's scenario waits, then writes a file): a standby then waits
// for its todo, as it does beside jobs of minutes, where the default quick
// jobs hand a standby its todo often as it becomes ready. The rows say so.
//
// HANDOVER_ROOTS=/old/clone:/new/clone runs the same bench on each build in
// turn, alternating (HANDOVER_ROUNDS rounds, default 1), for a before/after
// in one run; the rows are then prefixed with each root's last folder name.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, quantile, round } from './stats.js';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const { openStateStore, repoSlug } = await import(join(here, 'dist', 'src', 'state', 'index.js'));

const N = Number(process.env.HANDOVER_N ?? 10);
const AGENT_MS = Number(process.env.HANDOVER_AGENT_MS ?? 0);
const CONFIG = `[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\n`;

function gitIn(cwd, ...args) {
  return execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=b@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

const ms = (iso) => Date.parse(iso);

/** The spawn time in a run log's name: <stamp>-<todo>.log, stamp 2026-11-23T21-45-00-123Z. */
function logStamp(name) {
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d)-(\d\d)-(\d\d)-(\d{3})Z/.exec(name);
  return m ? Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`) : NaN;
}

function events(stateDir, jobId) {
  const f = join(stateDir, 'jobs', jobId, 'events.jsonl');
  return readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

function firstPromptAt(transcript) {
  for (const l of readFileSync(transcript, 'utf8').split('\n')) {
    if (!l) continue;
    const m = JSON.parse(l);
    if (m.dir === 'out' && m.message?.method === 'session/prompt') return m.t;
  }
  return NaN;
}

function readTrace(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
}

/**
 * The next runner's way to its first prompt, step by step: [step name, from
 * mark, to mark]. Marks of the next runner unless prefixed: "prev:" the
 * previous runner, "run:" ii run. The agent's start runs beside the steps
 * from baseline_done on; "wait for the agent" is what the prompt waited on it.
 */
const STEPS = [
  ['job end → ii run hands over', 'prev:job_end', 'run:handover'],
  ['hand-over → runner reads its todo id', 'run:handover', 'handed'],
  ['todo read (config, store)', 'handed', 'todo_read'],
  ['checks (base, templates, agent, setup)', 'todo_read', 'checked'],
  ['claim', 'checked', 'claim'],
  ['workspace (excluded)', 'claim', 'workspace'],
  ['records after the workspace', 'workspace', 'launched'],
  ['→ runner started', 'launched', 'run_start'],
  ['setup (excluded when run)', 'run_start', 'setup_done'],
  ['baseline tests (excluded)', 'setup_done', 'baseline_done'],
  ['leftovers check', 'baseline_done', 'leftovers_checked'],
  ['stage implementing', 'leftovers_checked', 'implementing'],
  ['change started', 'implementing', 'change_started'],
  ['prompt rendered', 'change_started', 'rendered'],
  ['wait for the agent → prompt sent', 'rendered', 'prompt'],
  ['agent: spawn', 'agent_spawn', 'agent_spawned'],
  ['agent: → ACP initialize answered', 'agent_spawned', 'acp_initialized'],
  ['agent: → session/new answered', 'acp_initialized', 'acp_session'],
  ['agent: start, whole', 'agent_spawn', 'agent_ready'],
  ['previous runner: job end → clean-up done', 'prev:job_end', 'prev:session_finished'],
  ['previous runner: → journal done', 'prev:session_finished', 'prev:journal_done'],
];

/** One `ii run --jobs <jobs>` over n fresh todos; the hand-overs' phases. */
async function oneRun(tmp, root, jobs, n) {
  const II = join(root, 'bin', 'ii.js');
  // Each build under its own pinned Node, as its bin/ii.js runs it for a
  // user: the scripted agent's startup snapshot is named after the binary
  // that built it (src/agent/snapshot-name.ts), so a build run under another
  // root's Node found none and started its agents from the bundle (about
  // 50 ms more CPU each), and only the root whose Node ran the bench had it.
  const pinned = join(root, 'node_modules', 'node', 'bin', 'node');
  const node = existsSync(pinned) ? pinned : process.execPath;
  const dir = join(tmp, `run-${jobs}`);
  const repo = join(dir, 'repo');
  mkdirSync(repo, { recursive: true });
  gitIn(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# bench\n');
  writeFileSync(join(repo, 'incrementum.toml'), CONFIG);
  gitIn(repo, 'add', '-A');
  gitIn(repo, 'commit', '-qm', 'base');
  const env = {
    ...process.env,
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    HOME: dir,
    NO_COLOR: '1',
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@example.com',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@example.com',
    II_TRACE: join(dir, 'trace.jsonl'),
  };
  if (AGENT_MS > 0) {
    const scenarios = join(dir, 'scenarios');
    mkdirSync(scenarios);
    const implement = [
      { type: 'delay', ms: AGENT_MS },
      { type: 'write', path: 'work.txt', content: 'done\n' },
    ];
    const turns = {
      implement: [{ actions: implement }],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Do' }] }],
    };
    writeFileSync(join(scenarios, 'default.json'), JSON.stringify(turns));
    env.II_SCRIPTED_SCENARIO = scenarios;
  }
  for (let i = 0; i < n; i++)
    execFileSync(node, [II, 'todo', 'create', '--title', `T${i}`], { cwd: repo, env });
  const code = await new Promise((res) => {
    const c = spawn(node, [II, 'run', '--jobs', String(jobs)], {
      cwd: repo,
      env,
      stdio: 'ignore',
    });
    c.on('exit', res);
  });
  if (code !== 0) throw new Error(`ii run --jobs ${jobs} exited ${code}`);
  const stateDir = join(dir, 'state', 'incrementum');
  const slug = repoSlug(repo);
  const store = openStateStore({ dir: stateDir });
  let list;
  try {
    list = store.jobs.list(slug, { activeOnly: false }).map((j) => store.jobs.get(j.id));
  } finally {
    store.close();
  }
  if (list.length !== n || list.some((j) => j.status !== 'completed'))
    throw new Error(`ii run --jobs ${jobs}: ${list.length} jobs, not all completed`);
  const runsDir = join(stateDir, 'runs', slug);
  const spawned = new Map();
  for (const f of existsSync(runsDir) ? readdirSync(runsDir) : []) {
    const todo = /-([^-]+)\.log$/.exec(f)?.[1];
    if (todo && !spawned.has(todo)) spawned.set(todo, logStamp(f));
  }
  const trace = readTrace(env.II_TRACE);
  // A runner that came back runs several jobs in turn: a job's marks are its
  // process's from the hand-over of its todo to the next hand-over there.
  const byTime = [...trace].sort((a, b) => a.t - b.t);
  const jobMarks = (j) => {
    const from = byTime.findIndex((e) => e.pid === j.pid && e.mark === 'handed' && e.todo === j.todo_id);
    const to = from < 0 ? -1 : byTime.findIndex((e, i) => i > from && e.pid === j.pid && e.mark === 'handed');
    const span = from < 0 ? byTime : byTime.slice(from, to < 0 ? undefined : to);
    const m = new Map();
    for (const e of span)
      if (e.pid === j.pid && (e.job === undefined || e.job === j.id) && !m.has(e.mark)) m.set(e.mark, e);
    return m;
  };
  const info = list.map((j) => {
    const ev = events(stateDir, j.id);
    const at = (type) => ev.find((e) => e.type === type);
    const sum = (pred) => ev.filter(pred).reduce((s, e) => s + (e.duration_ms ?? 0), 0);
    const ws = at('workspace');
    const workspaceMs = ws ? ws.duration_ms : NaN;
    const setupMs = sum((e) => e.type === 'setup_end') + sum((e) => e.type === 'setup_reused');
    const baselineMs = sum((e) => e.type === 'test_end' && e.baseline);
    const agentStart = ms(at('agent_start').ts);
    const prompt = firstPromptAt(j.agent_sessions[0].transcript);
    return {
      started: ms(j.started_at),
      completed: ms(j.completed_at),
      // A runner's log is named when it is given its todo: spawned cold, or handed it on standby.
      spawned: spawned.get(j.todo_id) ?? NaN,
      workspaceMs,
      setupMs,
      baselineMs,
      agentStart,
      prompt,
      marks: jobMarks(j),
      handedBy: trace.find((e) => e.mark === 'handover' && e.todo === j.todo_id),
    };
  });
  const byStart = [...info].sort((a, b) => a.started - b.started);
  const byEnd = [...info].sort((a, b) => a.completed - b.completed);
  const hand = [];
  for (let i = 0; i + jobs < byStart.length; i++) {
    const prev = byEnd[i];
    const next = byStart[i + jobs];
    const raw = next.prompt - prev.completed;
    const own = (Number.isNaN(next.workspaceMs) ? 0 : next.workspaceMs) + next.setupMs + next.baselineMs;
    const exit = next.spawned - prev.completed;
    const boot = next.started - next.spawned;
    const agent = next.prompt - next.agentStart;
    const markAt = (name) => {
      if (name.startsWith('prev:')) return prev.marks.get(name.slice(5));
      if (name.startsWith('run:')) return name === 'run:handover' ? next.handedBy : undefined;
      return next.marks.get(name);
    };
    const steps = {};
    const cpuSteps = {};
    const waitSteps = {};
    for (const [step, from, to] of STEPS) {
      const a = markAt(from);
      const b = markAt(to);
      steps[step] = a && b ? b.t - a.t : NaN;
      // The CPU a step took in its process (marks of one process only).
      cpuSteps[step] = a && b && a.pid === b.pid ? b.cpu - a.cpu : NaN;
      // How long its process waited for a core in it (marks with core_wait: Linux).
      waitSteps[step] =
        a && b && a.pid === b.pid && typeof a.core_wait === 'number' && typeof b.core_wait === 'number'
          ? b.core_wait - a.core_wait
          : NaN;
    }
    const initialized = next.marks.get('acp_initialized');
    const handed = next.marks.get('handed');
    const prompted = next.marks.get('prompt');
    // The other jobs' ends nearest this one's: with --jobs 2 and jobs of one
    // length, the two slots' jobs end together, and each hand-over shares
    // the cores with the other's (their runners, agents and clean-ups).
    const nearest = Math.min(
      ...byEnd.filter((o) => o !== prev).map((o) => Math.abs(o.completed - prev.completed)),
    );
    hand.push({
      nearest,
      steps,
      cpuSteps,
      waitSteps,
      cpu: handed && prompted ? prompted.cpu - handed.cpu : NaN,
      // The agent's own processes (its group, read from /proc by the runner as initialize is answered).
      agentCpu: typeof initialized?.agent_cpu === 'number' ? initialized.agent_cpu : NaN,
      prevCpu:
        prev.marks.get('job_end') && prev.marks.get('journal_done')
          ? prev.marks.get('journal_done').cpu - prev.marks.get('job_end').cpu
          : NaN,
      raw,
      excl: raw - own,
      exit,
      boot,
      workspace: next.workspaceMs,
      prepare: next.setupMs + next.baselineMs,
      agent,
      other:
        raw -
        exit -
        boot -
        (Number.isNaN(next.workspaceMs) ? 0 : next.workspaceMs) -
        next.setupMs -
        next.baselineMs -
        agent,
    });
  }
  return hand;
}

export async function run() {
  const roots = (process.env.HANDOVER_ROOTS ?? '').split(':').filter(Boolean);
  const held = AGENT_MS > 0 ? `agent held ${AGENT_MS} ms, ` : '';
  if (roots.length === 0) return runOn(here, held, [1, 2]);
  const rounds = Number(process.env.HANDOVER_ROUNDS ?? 1);
  const jobsList = (process.env.HANDOVER_JOBS ?? '2').split(',').map(Number);
  const all = new Map(roots.map((r) => [r, []]));
  for (let i = 0; i < rounds; i++)
    for (const r of roots)
      all.get(r).push(await runOn(r, `${held}${r.split('/').filter(Boolean).at(-1)} `, jobsList, true));
  // Each root's rounds pooled: the hand-overs of all its runs in one median.
  return roots.flatMap((r) => merge(all.get(r)));
}

/** The rows of several rounds of one root, from their hand-overs pooled. */
function merge(rounds) {
  if (rounds.length === 1) return rounds[0].rows;
  const pooled = rounds[0].raw.map((x, i) => ({
    ...x,
    hand: rounds.flatMap((r) => r.raw[i].hand),
    floor: median(rounds.map((r) => r.raw[i].floor)),
  }));
  return pooled.flatMap((p) => rowsOf(p.label, p.jobs, p.hand, p.floor));
}

function rowsOf(label, jobs, hand, floor) {
  const col = (k) => hand.map((h) => h[k]).filter((v) => !Number.isNaN(v));
  const row = (name, values, q, goal = '') => {
    const v = round(quantile(values, q), 0);
    return {
      name: `${label}--jobs ${jobs}: ${name}`,
      value: v,
      unit: 'ms',
      floor: round(floor, 0),
      ratio: round(v / floor, 1),
      goal,
    };
  };
  const rows = [
    row(`hand-over, job end → next first prompt, median of ${hand.length}`, col('raw'), 0.5),
    row('hand-over, p95', col('raw'), 0.95),
    row(
      'hand-over excluding the workspace (worktree, [workspace] setup, reuse, baseline tests), median',
      col('excl'),
      0.5,
      '≤ 200 ms',
    ),
    row('hand-over excluding the workspace, p95', col('excl'), 0.95),
    row('  phase exit: job end → next runner started / handed its todo, median', col('exit'), 0.5),
    row('  phase boot: → claim, median', col('boot'), 0.5),
    row('  phase workspace: worktree made, median', col('workspace'), 0.5),
    row('  phase prepare: setup + baseline tests, median', col('prepare'), 0.5),
    row('  phase agent: agent start → first prompt, median', col('agent'), 0.5),
    row('  phase other: the rest, median', col('other'), 0.5),
  ];
  for (const [step] of STEPS) {
    const v = hand.map((h) => h.steps[step]).filter((x) => !Number.isNaN(x));
    if (v.length) rows.push(row(`    step ${step}, median`, v, 0.5));
  }
  for (const [step] of STEPS) {
    const v = hand.map((h) => h.cpuSteps?.[step]).filter((x) => x !== undefined && !Number.isNaN(x));
    if (v.length && process.env.HANDOVER_CPU_STEPS) rows.push(row(`    cpu of step ${step}, median`, v, 0.5));
  }
  for (const [step] of STEPS) {
    const v = hand.map((h) => h.waitSteps?.[step]).filter((x) => x !== undefined && !Number.isNaN(x));
    if (v.length && process.env.HANDOVER_CPU_STEPS)
      rows.push(row(`    wait for a core in step ${step}, median`, v, 0.5));
  }
  if (jobs > 1) {
    const near = col('nearest');
    rows.push(row("  another job's end, the nearest to this one's, median", near, 0.5));
    const together = hand.filter((h) => h.nearest < h.raw).length;
    rows.push({
      name: `${label}--jobs ${jobs}:   hand-overs with another job ending within their span`,
      value: Math.round((100 * together) / hand.length),
      unit: '%',
      floor: null,
      ratio: null,
      goal: '',
    });
  }
  const cpu = col('cpu');
  if (cpu.length) rows.push(row('  cpu: next runner, hand-over → prompt, median', cpu, 0.5));
  const agentCpu = col('agentCpu');
  if (agentCpu.length)
    rows.push(row('  cpu: next agent, its start → ACP initialize answered, median', agentCpu, 0.5));
  const prevCpu = col('prevCpu');
  if (prevCpu.length) rows.push(row('  cpu: previous runner, job end → journal done, median', prevCpu, 0.5));
  return rows;
}

async function runOn(root, label, jobsList, keepRaw = false) {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-handover-'));
  try {
    // The floor around each run (the machine's load moves): node -e 0, before and after.
    const floorNow = () => {
      const out = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        spawnSync(process.execPath, ['-e', '0']);
        out.push(performance.now() - t);
      }
      return out;
    };
    const rows = [];
    const raw = [];
    for (const jobs of jobsList) {
      const before = floorNow();
      const hand = await oneRun(tmp, root, jobs, N);
      const floor = median([...before, ...floorNow()]);
      raw.push({ label, jobs, hand, floor });
      rows.push(...rowsOf(label, jobs, hand, floor));
    }
    return keepRaw ? { rows, raw } : rows;
  } finally {
    // HANDOVER_KEEP=1 keeps the runs (repositories, states, traces) to read afterwards.
    if (process.env.HANDOVER_KEEP) process.stderr.write(`handover: kept ${tmp}\n`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}
