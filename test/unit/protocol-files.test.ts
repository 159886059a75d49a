import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  COMMIT_MESSAGE_FILE,
  FEEDBACK_FILE,
  clearProtocolFile,
  parseFeedback,
  takeProtocolFile,
} from '../../src/job/protocol-files.js';
import { tempDir } from '../helpers/tmp.js';

describe('parseFeedback', () => {
  it('a missing file is ACCEPT', () => {
    expect(parseFeedback(null)).toEqual({ ok: true, outcome: 'ACCEPT', details: '', missing: true });
  });
  it('reads the verdict and the details after the blank line', () => {
    expect(parseFeedback('REQUEST_CHANGES\n\n- fix x\n- and y\n')).toEqual({
      ok: true,
      outcome: 'REQUEST_CHANGES',
      details: '- fix x\n- and y',
      missing: false,
    });
    expect(parseFeedback('ACCEPT\n')).toMatchObject({ ok: true, outcome: 'ACCEPT', details: '' });
    expect(parseFeedback('ABANDON\n\nnot worth it')).toMatchObject({
      outcome: 'ABANDON',
      details: 'not worth it',
    });
  });
  it('tolerates CRLF, surrounding blanks, lower case and details with no blank line', () => {
    expect(parseFeedback('\r\n  accept  \r\n\r\nfine\r\n')).toMatchObject({
      outcome: 'ACCEPT',
      details: 'fine',
    });
    expect(parseFeedback('REQUEST_CHANGES\nfix it')).toMatchObject({
      outcome: 'REQUEST_CHANGES',
      details: 'fix it',
    });
  });
  it('anything else is invalid, with the reason', () => {
    const r = parseFeedback('LGTM, ship it\n\nnice');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/"LGTM, ship it", not ACCEPT, REQUEST_CHANGES or ABANDON/);
    expect(parseFeedback('')).toMatchObject({ ok: false, reason: 'the feedback file is empty' });
    expect(parseFeedback('ACCEPTED')).toMatchObject({ ok: false });
  });
});

describe('protocol files', () => {
  let tmp: ReturnType<typeof tempDir>;
  let ws: string;
  let root: string;
  beforeEach(() => {
    tmp = tempDir();
    ws = join(tmp.path, 'ws');
    root = join(tmp.path, 'repo');
    mkdirSync(ws);
    mkdirSync(root);
  });
  afterEach(() => tmp.cleanup());

  it('prefers the workspace, falls back to the repo root, and deletes both', () => {
    writeFileSync(join(ws, FEEDBACK_FILE), 'ACCEPT\n');
    writeFileSync(join(root, FEEDBACK_FILE), 'ABANDON\n');
    expect(takeProtocolFile(ws, root, FEEDBACK_FILE)).toBe('ACCEPT\n');
    expect(existsSync(join(ws, FEEDBACK_FILE)) || existsSync(join(root, FEEDBACK_FILE))).toBe(false);
    writeFileSync(join(root, COMMIT_MESSAGE_FILE), 'feat: x\n');
    expect(takeProtocolFile(ws, root, COMMIT_MESSAGE_FILE)).toBe('feat: x\n');
    expect(existsSync(join(root, COMMIT_MESSAGE_FILE))).toBe(false);
    expect(takeProtocolFile(ws, root, COMMIT_MESSAGE_FILE)).toBeNull();
  });
  it('clear removes a stale file from both places', () => {
    writeFileSync(join(ws, FEEDBACK_FILE), 'x');
    writeFileSync(join(root, FEEDBACK_FILE), 'y');
    clearProtocolFile(ws, root, FEEDBACK_FILE);
    expect(existsSync(join(ws, FEEDBACK_FILE)) || existsSync(join(root, FEEDBACK_FILE))).toBe(false);
  });
});
