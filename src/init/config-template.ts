// The commented incrementum.toml that `ii init` writes. Every key here is one
// src/job/config.ts accepts (a test parses the output with loadConfig).
import { DEFAULT_RUN_NICE } from '../model/nice.js';

const tomlString = (s: string): string => JSON.stringify(s);

export interface InitOptions {
  testCommands: string[];
  /** Install commands from the lockfiles, with the lockfile that named each and why. */
  setup?: { command: string; lockfile: string; reason?: string }[];
  /** Agent preset to write, e.g. "opencode". */
  agent?: string;
}

function setupLines(setup: InitOptions['setup'] = []): string {
  if (setup.length === 0)
    return `# Commands that make a new workspace able to run the tests (install the
# dependencies), e.g. ["npm ci"]; none were needed by the lockfiles found here:
setup = []`;
  const why = setup.every((s) => s.reason)
    ? `guessed from what a workspace has:\n${setup.map((s) => `# ${s.command}: ${s.reason}`).join('\n')}`
    : `guessed from ${setup.map((s) => s.lockfile).join(', ')}`;
  return `# Commands that make a new workspace able to run the tests, before the first
# prompt and again whenever a lockfile changes (${why}):
setup = [${setup.map((s) => tomlString(s.command)).join(', ')}]`;
}

export function configTemplate(o: InitOptions): string {
  const tests =
    o.testCommands.length > 0
      ? `test-commands = [${o.testCommands.map(tomlString).join(', ')}]`
      : `# No test command could be guessed: set at least one before \`ii job do\`.\ntest-commands = []`;
  return `# incrementum configuration for this repository.
# Keys here win over ~/.config/incrementum/config.toml. Reference: README.md.

[agent]
# Which ACP agent does the work: a preset (opencode, claude, gemini, codex, scripted) ...
preset = ${tomlString(o.agent ?? 'opencode')}
# ... or any agent that speaks ACP over stdio, as an argv array (wins over preset):
# command = ["opencode", "acp"]
# Extra environment for the agent process:
${o.agent === 'scripted' ? '# The scripted agent plays the scenario this names (README: The scripted agent);\n# without one it changes nothing:\n# env = { II_SCRIPTED_SCENARIO = "scenario.json" }' : '# env = { OPENCODE_LOG = "info" }'}
# Longest one prompt turn may take before it is cancelled:
turn-timeout-seconds = 1800
# Most one prompt turn may add to its transcript, in MB (fractions allowed): an
# agent that floods keeps its turn's first half and its last part, and a line
# saying what was dropped between them:
transcript-max-mb = 32
# Who answers the agent's permission requests: "workspace" allows what stays in
# the workspace; "ask" sends each to you (ii job answer, the board's Needs you);
# "ask-commands" sends you the shell commands. Unanswered ones are rejected:
# permissions = "workspace"
# ask-timeout = "30m"
# What never asks (command prefixes, ACP tool kinds):
# allow = { commands = ["npm test", "git status"], kinds = ["read", "search"] }

[job]
# Run in order through a shell in the job's workspace; a non-zero exit fails the iteration.
${tests}
# A change that needs more iterations than this fails the job instead of looping forever.
max-iterations = 8
# A job that makes more changes than this fails.
max-changes = 10
# Ask the agent to commit its own work at the end of each iteration (the runner commits if it does not).
auto-commit = true
# A test command still running after this long is stopped (with all it started) and fails the iteration:
test-timeout-seconds = 1800
# Run the tests once on the untouched base before the first prompt: if they
# already fail there, the job stops before spending an agent turn.
baseline-tests = true

[workspace]
# Files git ignores that a job's workspace still needs, copied from this checkout:
copy = []
${setupLines(o.setup)}
# When a setup command is the package manager's install and the lockfile matches
# this checkout's, its node_modules is reused instead ("overlay": in the job's
# sandbox, mounted read-only beneath a layer of the workspace's own, and cloned
# where jobs are not sandboxed; "clone": copy-on-write where the filesystem
# can, else a copy; "hardlink": faster, but shares files with this checkout;
# "off": always run the command):
reuse = "overlay"

[run]
# Jobs \`ii run\` keeps running at once (ii run --jobs N wins):
jobs = 2
# A todo whose jobs failed (or were abandoned) this many times is left alone
# until \`ii todo reopen\`:
max-attempts = 2
# How far below yours the jobs' CPU priority is (nice +N, 0 to 19; 0: your
# own): your board, editor and shell come first when the cores are busy
# (ii run --nice N wins):
nice = ${DEFAULT_RUN_NICE}

# [remote]
# Runners on several machines sharing one store (PostgreSQL) push each job's
# refs (refs/incrementum/...) to this remote as they are made, and other
# machines fetch them for diffs and landings; on by default with PostgreSQL:
# name = "origin"
# push = true
`;
}
