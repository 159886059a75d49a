// The body of ii job answer (definition in index.ts): closes the permission
// request a job waits on; its runner, in another process, replies to the agent.
import { answerAsk } from '../../job/answer.js';
import type { AskAnswer } from '../../model/permission-ask.js';
import { waitText } from '../../model/waiting.js';
import { shownLine } from '../../text/shown.js';
import { currentRepo, withStore } from '../context.js';
import type { AnswerOptions } from './options.js';

export async function jobAnswer(id: string, answer: AskAnswer, o: AnswerOptions): Promise<void> {
  const repo = currentRepo();
  await withStore(async (store) => {
    const job = await store.jobs.resolve(repo.slug, id);
    const ask = await answerAsk({
      store,
      jobId: job.id,
      answer,
      note: o.note ?? null,
      ...(o.ask !== undefined ? { askId: o.ask } : {}),
    });
    process.stdout.write(
      `job ${job.id}: ${answer} request ${ask.id}, ${ask.tool_kind ?? 'request'} "${shownLine(ask.command ?? ask.title)}" (it waited ${waitText(ask.waited_ms ?? 0)}); its runner replies to the agent.\n`,
    );
  });
}
