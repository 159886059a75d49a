// The real `opencode acp`, offline against a scripted model server: it writes
// one new file and edits an existing one through its own tools, and the
// tracker reports exactly those two. opencode-ai is installed into a cache
// folder on first run; the test is skipped only when the npm registry cannot
// be reached, and any other failure to install fails it.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startAgent } from '../../src/agent/acp-session.js';
import { groupAlive } from '../../src/proc/group.js';
import { transcriptText } from '../../src/job-log/transcript-text.js';
import { scriptedModel } from '../helpers/model-server.js';
import { ensureAgent, OPENCODE, opencodeHome, titleFor } from '../helpers/real-agents.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const oc = ensureAgent(OPENCODE);
const tmp = tempDir('ii-opencode-');
afterAll(tmp.cleanup);

describe.skipIf('skip' in oc)(titleFor('opencode acp (real agent, scripted model)', oc), () => {
  it('reports the new file and the edited one, with is_new right', { timeout: 180_000 }, async () => {
    const ws = join(tmp.path, 'ws');
    mkdirSync(ws);
    gitRepo(ws, { 'existing.txt': 'first line\nold line\nlast line\n' });
    const model = await scriptedModel('openai', [
      { tool: 'write', args: { filePath: join(ws, 'new.txt'), content: 'brand new\nfile\n' } },
      {
        tool: 'edit',
        args: { filePath: join(ws, 'existing.txt'), oldString: 'old line', newString: 'new line' },
      },
      { text: 'Done.' },
    ]);
    const transcript = join(tmp.path, 'opencode.jsonl');
    const s = await startAgent({
      agent: {
        name: 'opencode',
        command: [(oc as { bin: string }).bin, 'acp'],
        env: opencodeHome(join(tmp.path, 'home'), model.url),
      },
      cwd: ws,
      transcriptPath: transcript,
      turnTimeoutMs: 120_000,
      startTimeoutMs: 120_000,
      stopGrace: { eofMs: 1000, termMs: 2000 },
    });
    const pid = s.pid!;
    try {
      const r = await s.prompt('Create new.txt, then change "old line" to "new line" in existing.txt.');
      expect(r.stopReason).toBe('end_turn');
      expect(readFileSync(join(ws, 'new.txt'), 'utf8')).toBe('brand new\nfile\n');
      expect(readFileSync(join(ws, 'existing.txt'), 'utf8')).toBe('first line\nnew line\nlast line\n');
      const files = s.files().sort((a, b) => a.path.localeCompare(b.path));
      expect(files.map((f) => [f.path, f.is_new, f.is_deleted])).toEqual([
        ['existing.txt', false, false],
        ['new.txt', true, false],
      ]);
      expect(files[0]).toMatchObject({ additions: 1, deletions: 1 });
      expect(model.requests).toBeGreaterThanOrEqual(3);
      const lines = readFileSync(transcript, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as unknown);
      expect(transcriptText(lines).join('\n')).toContain('(turn ended: end_turn)');
    } finally {
      await s.close();
      await model.close();
    }
    expect(groupAlive(pid)).toBe(false);
  });
});
