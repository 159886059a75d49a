// Simulated concurrent jobs for bench/scale.bench.js, where the machine
// cannot run every job as a real runner and agent: `n` active jobs held by
// this process, each with an agent session whose transcript gets one
// session/update notification `rate` times a second, written as a runner's
// TranscriptRecorder writes it (one append a line at this rate), and a
// heartbeat every 5 s, as a runner's. What reaches the dashboard (the
// database's writes, the files it watches) is what real jobs make of it.
// Prints the job ids, one line; stops and ends its jobs when stdin closes.
import { appendFileSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';

const [dist, stateDir, repo, n, rate] = process.argv.slice(2);
const { openStateStore, transcriptFile } = await import(`${dist}/src/state/index.js`);
const { appendEvent } = await import(`${dist}/src/state/events.js`);
const store = openStateStore({ dir: stateDir });
const jobs = [];
for (let i = 0; i < Number(n); i++) {
  const todo = store.todos.create(repo, { title: `simulated job ${i}` });
  store.todos.setStatus(repo, todo.id, 'in_progress');
  const job = store.jobs.create(repo, { todo_id: todo.id, pid: process.pid, host: hostname() });
  const id = `sim${String(i).padStart(9, '0')}`;
  const transcript = transcriptFile(stateDir, job.id, id);
  mkdirSync(dirname(transcript), { recursive: true });
  store.jobs.addAgentSession(job.id, {
    purpose: 'implement',
    id,
    transcript,
    started_at: new Date().toISOString(),
  });
  appendEvent(stateDir, job.id, 'agent_start', { purpose: 'implement', agent_session_id: id });
  jobs.push({ id: job.id, transcript, session: id });
}
let k = 0;
const stream = setInterval(
  () => {
    k++;
    for (const j of jobs) {
      const note = {
        jsonrpc: '2.0',
        method: 'session/update',
        params: {
          sessionId: j.session,
          update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `token ${k} ` } },
        },
      };
      appendFileSync(j.transcript, `{"t":${Date.now()},"dir":"in","message":${JSON.stringify(note)}}\n`);
    }
  },
  1000 / Number(rate),
);
const beat = setInterval(() => {
  for (const j of jobs) store.jobs.heartbeat(j.id, process.pid, hostname());
}, 5000);
process.stdout.write(jobs.map((j) => j.id).join(' ') + '\n');
process.stdin.resume();
process.stdin.on('end', () => {
  clearInterval(stream);
  clearInterval(beat);
  for (const j of jobs) store.jobs.finish(j.id, 'abandoned', 'the benchmark is done');
  store.close();
  process.stdout.write(`${k}\n`);
});
