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

function checkpoints(i: JournalInputs): Section<Checkpoints | null> {
  const gap = gitGap(i.git);
  if (gap !== null) return { value: null, source: 'none', warnings: [`no checkpoints: ${gap}`] };
  const log = (i.git as GitFacts).log;
  if (!log.ok) return { value: null, source: 'none', warnings: [`no checkpoints: ${log.error}`] };
  const items = log.value.map((e) => ({
    sha: e.sha,
    committed_at: Number.isFinite(e.time) ? new Date(e.time * 1000).toISOString() : 'N/A',
    subject: e.subject,
  }));
  return {
    value: { items, last_sha: items.at(-1)?.sha ?? null },
    source: 'git log base..head',
    warnings: [],
  };
}

function changes(i: JournalInputs): Section<ChangesSummary | null> {
  const gap = gitGap(i.git);
  if (gap !== null) return { value: null, source: 'none', warnings: [`no change summary: ${gap}`] };
  const { numstat, diffStat } = i.git as GitFacts;
  if (!numstat.ok) return { value: null, source: 'none', warnings: [`no change summary: ${numstat.error}`] };
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
      files_changed: files.length,
      insertions: files.reduce((n, f) => n + f.insertions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
      top_files: top,
      diff_stat: diffStat.ok ? diffStat.value : '',
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
  const journal: Journal = {
    schema_version: JOURNAL_SCHEMA_VERSION,
    generated_by: i.generatedBy,
    generated_at: i.now.toISOString(),
    identity: take(id),
    status: take(st),
    milestones: take(ms),
    checkpoints: take(cp),
    verification: take(ver),
    changes: take(ch),
    next_action: take(na),
    notes: take(nt),
    resumed_from: i.job.retried_from,
    usage: take(us),
    extraction: {
      identity: id.source,
      status: st.source,
      milestones: ms.source,
      checkpoints: cp.source,
      verification: ver.source,
      last_failure: ver.failureSource,
      changes: ch.source,
      next_action: na.source,
      notes: nt.source,
      resumed_from: i.job.retried_from ? 'job record' : 'none',
      usage: us.source,
    },
    warnings,
    inputs: i.fingerprint,
  };
  // Every string, once more: a title, a review comment or a commit subject
  // can quote a key as well as test output can (redaction is idempotent).
  return redactDeep(journal);
}
