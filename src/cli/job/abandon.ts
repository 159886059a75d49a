// The body of ii job abandon (definition in index.ts): asks a job's runner to
// stop it, or cleans up after a runner that is gone.
import { UserError } from '../../errors.js';
import { abandonJob } from '../../job/abandon.js';
import { describeCleanup } from '../../job/dead-runner.js';
import { localProbe } from '../../proc/alive.js';
import { currentRepo, withStore } from '../context.js';
import { realDeps } from './deps.js';
import type { AbandonOptions } from './options.js';

export async function jobAbandon(id: string, o: AbandonOptions): Promise<void> {
  const repo = currentRepo();
  const deps = await realDeps();
  await withStore(async (store) => {
    const job = await store.jobs.resolve(repo.slug, id);
    const r = await abandonJob(store, store.dir, job, {
      ...(o.reason ? { reason: o.reason } : {}),
      probe: localProbe,
      finishSession: (sessionId) => deps.finishSession(store, sessionId, 'failed').then(() => {}),
    });
    if (r.kind === 'cleaned') {
      process.stdout.write(`job ${job.id} abandoned (its runner was gone): ${describeCleanup(r.cleanup)}.\n`);
      return;
    }
    process.stdout.write(`asked the runner of job ${job.id} (pid ${job.pid ?? '?'}) to abandon it.\n`);
    if (!o.wait) return;
    const end = Date.now() + 30_000;
    while (Date.now() < end) {
      const now = await store.jobs.get(job.id);
      if (now && now.status !== 'active') {
        process.stdout.write(`job ${job.id} is ${now.status}.\n`);
        return;
      }
      await new Promise((res) => setTimeout(res, 200));
    }
    throw new UserError(
      `job ${job.id} is still running after 30 s; is its runner (pid ${job.pid}) stuck?`,
      1,
    );
  });
}
