// The body of ii job land (definition in index.ts): hands the work to
// landJob (src/land/landing.ts) and prints its progress on stderr, the landed
// commit on stdout (or the record as JSON with --json).
import { loadConfig } from '../../job/config.js';
import { abortLanding, continueLanding, landJob, type LandProgress } from '../../land/landing.js';
import { UserError } from '../../errors.js';
import { shownText } from '../../text/shown.js';
import { currentRepo, withStore } from '../context.js';
import { printJson, style } from '../format.js';
import { realDeps, realLandingVcs } from './deps.js';
import type { LandOptions } from './options.js';

export async function jobLand(id: string, o: LandOptions): Promise<void> {
  if (o.continue && o.abort) throw new UserError('--continue and --abort go one at a time.');
  const repo = currentRepo();
  const config = loadConfig(repo.root);
  const st = style(process.stderr.isTTY === true && !process.env.NO_COLOR);
  const say = (s: string) => process.stderr.write(`${s}\n`);
  const abort = new AbortController();
  // Ctrl-C during the test run ends the test's process group; nothing moves.
  const onSignal = () => abort.abort();
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const sig of signals) process.on(sig, onSignal);
  const vcs = await realLandingVcs();
  try {
    await withStore(async (store) => {
      const job = await store.jobs.resolve(repo.slug, id);
      if (o.abort) {
        const back = await abortLanding({ store, stateDir: store.dir, repo, config, job, vcs });
        if (o.json) printJson(back);
        say(`the landing of job ${job.id} was aborted: the job is completed, not landed, as before`);
        return;
      }
      const input = {
        store,
        stateDir: store.dir,
        repo,
        config,
        job,
        vcs,
        deps: realDeps,
        ...(o.onto ? { onto: o.onto } : {}),
        // --continue keeps the choice the stopped landing was started with, unless --no-test now.
        ...(o.continue && o.test !== false ? {} : { test: o.test !== false }),
        ...(o.stopOnConflict ? { onConflict: 'stop' as const } : {}),
        signal: abort.signal,
        onProgress: (p: LandProgress) => {
          const line = progressLine(p);
          if (line) say(line);
        },
      };
      const r = o.continue ? await continueLanding(input) : await landJob(input);
      if (o.json) printJson(r.job);
      else process.stdout.write(`${r.landed.commit}\n`);
      say(
        st.green(`job ${job.id} landed on ${r.landed.onto}`) +
          ` · ${r.commits.length} commit${r.commits.length === 1 ? '' : 's'} · ${r.landed.commit.slice(0, 10)}` +
          (r.landed.tested ? ' · tested on the rebased tip' : ' · not tested (--no-test)'),
      );
    });
  } finally {
    for (const sig of signals) process.off(sig, onSignal);
  }
}

function progressLine(p: LandProgress): string | null {
  switch (p.type) {
    case 'target':
      return (
        (p.note ? `note: ${shownText(p.note)}\n` : '') +
        `landing ${p.commits} commit${p.commits === 1 ? '' : 's'} onto ${shownText(p.onto)} (${p.tip.slice(0, 10)})`
      );
    case 'rebased':
      return `rebased onto ${p.onto_tip.slice(0, 10)}: ${p.head.slice(0, 10)}`;
    case 'setup':
      return `setup: ${shownText(p.command)}`;
    case 'test_start':
      return `test: ${shownText(p.command)}`;
    case 'test_end':
      return `  exit ${p.result.exit_code}`;
    case 'tests_skipped':
      return 'tests skipped (--no-test)';
    case 'target_moved':
      return `the branch moved meanwhile (now ${p.tip.slice(0, 10)}): rebasing and testing again`;
    case 'checkout_updated':
      return `fast-forwarded the checkout at ${shownText(p.path)}`;
    case 'resolving':
      return `conflicts with ${shownText(p.onto)} in ${p.files.map(shownText).join(', ')}: the agent resolves them in a new change ([land] on-conflict = "agent")`;
    case 'resolution_stage':
      return `  resolution: ${p.stage}`;
    case 'resolved':
      return p.status === 'completed'
        ? 'resolved, tested and reviewed: landing again'
        : `the resolution ended ${p.status}${p.reason ? `: ${shownText(p.reason)}` : ''}`;
    case 'test_output':
    case 'landed':
      return null;
  }
}
