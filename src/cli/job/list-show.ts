// The bodies of ii job list | show (definitions in index.ts).
import { fstatSync } from 'node:fs';
import { UserError } from '../../errors.js';
import { JOB_STATUSES } from '../../model/enums.js';
import { awaitsLanding } from '../../model/derive.js';
import type { Job, JobStatus } from '../../model/job.js';
import { isWaiting } from '../../model/waiting.js';
import { shownJsonText } from '../../text/json.js';
import { redactDeep } from '../../text/redact.js';
import { currentRepo, withStore } from '../context.js';
import { printJson, style } from '../format.js';
import { guardStdout, stdoutBytes } from '../output.js';
import { reapDeadRunnersSaying } from '../reap.js';
import { jobDetail, jobListTable } from './view.js';

const NEWLINE = new Uint8Array([0x0a]);

/**
 * process.stdout.isTTY without making process.stdout (list-show's JSON
 * writer must not) or loading node:tty (3 ms of a 30 ms start) for a pipe or
 * a file: only a character device (a terminal, /dev/null) is asked.
 */
function stdoutIsTerminal(): boolean {
  try {
    if (!fstatSync(1).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  return process.getBuiltinModule('node:tty').isatty(1);
}

/**
 * The listing stopped after `jobs` jobs: some of it may be on stdout already
 * (written in blocks as it was read), and a pipe's reader (jq) would meet
 * only a parse error. What was read goes out whole, job by job, with no
 * closing bracket (never valid JSON), and stderr says so before the error
 * that stopped it (main.ts reports that, with its exit code).
 */
function cutShort(out: ReturnType<typeof stdoutBytes>, jobs: number): void {
  out.end();
  process.stderr.write(
    `ii: the job listing on stdout stops after its first ${jobs} job${jobs === 1 ? '' : 's'}, with no closing bracket: it is not valid JSON, nor the whole list.\n` +
      'Run ii job list --json again once what stopped it (below) is dealt with.\n',
  );
}

export async function jobList(o: { status?: string; all?: boolean; json?: boolean }): Promise<void> {
  let status: JobStatus | undefined;
  // `waiting`: the active jobs with a permission request open for a person.
  const waitingOnly = o.status?.toLowerCase() === 'waiting';
  if (o.status && !waitingOnly) {
    const s = o.status.toLowerCase();
    status = JOB_STATUSES.find((v) => v === s);
    if (!status)
      throw new UserError(`unknown status "${o.status}": use one of ${JOB_STATUSES.join(', ')}, waiting`);
  }
  if (waitingOnly) status = 'active';
  const { slug } = currentRepo();
  // By default what is still to happen: the active jobs, and the completed
  // ones still to land (a killed ii run --land left them; the next one lands them).
  const filter = status ? { status } : { activeOnly: !o.all, toLand: true };
  if (o.json) {
    // The store writes the JSON text itself: no Job objects for thousands of
    // jobs. Secrets are redacted (parsing it only where one may be), control
    // characters escaped; by the store, as bytes, when every job is listed
    // (it scans only the texts not found clean as they were written). To a
    // pipe or a file, those bytes are written as they are read.
    if (!waitingOnly && !stdoutIsTerminal()) {
      const out = stdoutBytes();
      let jobs = 0;
      let listed = false;
      try {
        // Mapped: the listing reads most of the store's pages once (sqlite/db.ts).
        await withStore(
          async (s) => {
            await reapDeadRunnersSaying(s, slug, 'ii job list');
            // A part is a job's text, or the bracket or comma around it (one byte).
            await s.jobs.eachShown(slug, filter, (b) => {
              if (b.length > 1) jobs++;
              out.put(b);
            });
            listed = true;
          },
          { mapped: true },
        );
      } catch (err) {
        if (!listed && jobs > 0) cutShort(out, jobs);
        else if (listed) out.end(NEWLINE);
        throw err;
      }
      out.end(NEWLINE);
      return;
    }
    guardStdout();
    const text = await withStore(async (s) => {
      await reapDeadRunnersSaying(s, slug, 'ii job list');
      if (!waitingOnly) return await s.jobs.listShown(slug, filter);
      const json = await s.jobs.listJson(slug, filter);
      return shownJsonText(JSON.stringify((JSON.parse(json) as Job[]).filter(isWaiting)));
    });
    if (process.stdout.isTTY)
      return printJson(JSON.parse(typeof text === 'string' ? text : Buffer.from(text).toString('utf8')));
    process.stdout.write(text);
    process.stdout.write('\n');
    return;
  }
  const { jobs, total, todos } = await withStore(async (s) => {
    // A job whose runner is gone is shown as what it is once met: failed.
    await reapDeadRunnersSaying(s, slug, 'ii job list');
    const all = await s.jobs.list(slug);
    const jobs = status
      ? all.filter((j) => j.status === status && (!waitingOnly || isWaiting(j)))
      : o.all
        ? all
        : all.filter((j) => j.status === 'active' || awaitsLanding(j));
    return { jobs, total: all.length, todos: new Map((await s.todos.list(slug)).map((t) => [t.id, t])) };
  });
  guardStdout();
  if (jobs.length === 0) {
    const hint =
      total > 0 && !o.all ? ` (${total} finished job${total === 1 ? '' : 's'}: ii job list --all)` : '';
    process.stdout.write(`No ${waitingOnly ? 'waiting' : (status ?? 'active')} jobs${hint}.\n`);
    return;
  }
  process.stdout.write(jobListTable(jobs, todos, style()) + '\n');
}

export async function jobShow(id: string, o: { json?: boolean }): Promise<void> {
  const { slug } = currentRepo();
  const { job, todo, asks } = await withStore(async (s) => {
    const job = await s.jobs.resolve(slug, id);
    return { job, todo: await s.todos.get(slug, job.todo_id), asks: await s.asks.list(job.id) };
  });
  if (o.json) return printJson(redactDeep(job));
  process.stdout.write(jobDetail(job, todo, style(), Date.now(), asks) + '\n');
}
