// The journal builder: pure, from gathered inputs to a Journal. It never
// throws for a gap in its inputs: a section it cannot fill is null, its
// extraction says "none" and a warning says why.
import { skippedWarning } from '../state/jsonl.js';
import { eventsFile } from '../state/paths.js';
import { redactDeep } from '../text/redact.js';
import type { GitFacts } from './git-facts.js';
import type { JournalInputs } from './inputs.js';
import {
  JOURNAL_SCHEMA_VERSION,
  TOP_FILES,
  type ChangesSummary,
  type Checkpoint,
  type Checkpoints,
  type Journal,
} from './schema.js';
import {
  identity,
  milestones,
  nextAction,
  notes,
  status,
  usage,
  verification,
  type Section,
} from './sections.js';

/** Why git facts are unavailable, or null when they are there. */
const gitGap = (git: JournalInputs['git']): string | null => ('unavailable' in git ? git.unavailable : null);

const NO_CHECKPOINTS: Checkpoints = { created: 0, list: [], last_sha: null };

/** The index of the change whose accepted commit `sha` is, or -1. */
function changeIndexOf(i: JournalInputs, sha: string): number {
  return i.job.changes.findIndex((c) => c.commits.at(-1)?.commit_id === sha);
}

/**
 * The accepted commits base..head from git log. A line that does not parse
 * as sha|committer time|subject is left out with a warning, never guessed.
 */
function checkpoints(i: JournalInputs): Section<Checkpoints> {
  const gap = gitGap(i.git);
  if (gap !== null) return { value: NO_CHECKPOINTS, source: 'none', warnings: [`no checkpoints: ${gap}`] };
  const log = (i.git as GitFacts).log;
  if (!log.ok) return { value: NO_CHECKPOINTS, source: 'none', warnings: [`no checkpoints: ${log.error}`] };
  const warnings: string[] = [];
  const list: Checkpoint[] = [];
  for (const e of log.value) {
    if (!/^[0-9a-f]{40,64}$/.test(e.sha) || !Number.isFinite(e.time)) {
      warnings.push(`a checkpoint line of git log does not parse and was left out: ${JSON.stringify(e.sha)}`);
      continue;
    }
    const index = changeIndexOf(i, e.sha);
    list.push({
      milestone_index: index >= 0 ? index : list.length,
      title: e.subject,
      sha: e.sha,
      created_at: new Date(e.time * 1000).toISOString(),
    });
  }
  return {
    value: { created: list.length, list, last_sha: list.at(-1)?.sha ?? null },
    source: 'git log base..head',
    warnings,
  };
}

function changes(i: JournalInputs): Section<ChangesSummary> {
  const base_sha = i.job.base_rev;
  const head_sha = 'sha' in i.head ? i.head.sha : null;
  const none: ChangesSummary = {
    base_sha,
    head_sha,
    files_changed: null,
    insertions: null,
    deletions: null,
    top_files: null,
    diff_stat: null,
  };
  const gap = gitGap(i.git);
  if (gap !== null) return { value: none, source: 'none', warnings: [`no change summary: ${gap}`] };
  const { numstat, diffStat } = i.git as GitFacts;
  if (!numstat.ok) return { value: none, source: 'none', warnings: [`no change summary: ${numstat.error}`] };
  const files = numstat.value.map((f) => ({
    path: f.path,
    insertions: f.insertions ?? 0,
    deletions: f.deletions ?? 0,
  }));
  const top = [...files]
    .sort((a, b) => b.insertions + b.deletions - (a.insertions + a.deletions) || a.path.localeCompare(b.path))
    .slice(0, TOP_FILES);
  const warnings = diffStat.ok ? [] : [`no diff stat: ${diffStat.error}`];
  return {
    value: {
      base_sha,
      head_sha,
      files_changed: files.length,
      insertions: files.reduce((n, f) => n + f.insertions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
      top_files: top,
      diff_stat: diffStat.ok ? diffStat.value : null,
    },
    source: 'git diff base..head',
    warnings,
  };
}

export function buildJournal(i: JournalInputs): Journal {
  const warnings: string[] = [];
  const take = <T>(s: Section<T>): T => {
    warnings.push(...s.warnings);
    return s.value;
  };
  if (i.events.state === 'missing')
    warnings.push(
      'the event log is missing: no stage history or test output (a job that never ran, or a deleted log)',
    );
  if (i.events.state === 'error') warnings.push(`the event log could not be read: ${i.events.error}`);
  const skipped = skippedWarning(eventsFile(i.stateDir, i.job.id), i.eventsSkipped, 'an event');
  if (skipped) warnings.push(skipped);
  if (i.stop.state === 'error') warnings.push(`the stop file was ignored: ${i.stop.error}`);
  if ('unknown' in i.head) warnings.push(`the head commit is unknown: ${i.head.unknown}`);

  const id = identity(i);
  const st = status(i);
  const ms = milestones(i.job);
  const cp = checkpoints(i);
  const ver = verification(i);
  const ch = changes(i);
  const na = nextAction(i, st.value, i.head);
  const nt = notes(i);
  const us = usage(i.job);
  const checkpointsValue = take(cp);
  const nextValue = take(na);
  const retried = i.job.retried_from;
  const journal: Journal = {
    schema_version: JOURNAL_SCHEMA_VERSION,
    generated_by: i.generatedBy,
    generated_at: i.now.toISOString(),
    ...take(id),
    status: take(st),
    milestones: take(ms),
    checkpoints: checkpointsValue,
    verification: take(ver),
    changes: take(ch),
    next_action: nextValue,
    notes: take(nt),
    resumed_from: retried && i.job.base_rev ? { run_id: retried, checkpoint_sha: i.job.base_rev } : null,
    extraction: {
      checkpoints: checkpointsValue.created > 0 ? 'git_log_v1' : 'none',
      // The spec's rule (attempts_total > 0), for counts read from the
      // timeline: the event log's tests events (sections.ts, verification).
      verification:
        ver.source.startsWith('events') && ver.value.summary.attempts_total > 0 ? 'timeline_v1' : 'none',
      next_action: nextValue === null ? 'none' : na.source === 'stop file' ? 'stop_json' : 'derived',
    },
    warnings,
    usage: take(us),
    sources: {
      identity: id.source,
      status: st.source,
      milestones: ms.source,
      checkpoints: cp.source,
      verification: ver.source,
      last_failure: ver.failureSource,
      changes: ch.source,
      next_action: na.source,
      notes: nt.source,
      resumed_from: retried ? 'job record' : 'none',
      usage: us.source,
    },
    inputs: i.fingerprint,
  };
  // Every string, once more: a title, a review comment or a commit subject
  // can quote a key as well as test output can (redaction is idempotent).
  return redactDeep(journal);
}
