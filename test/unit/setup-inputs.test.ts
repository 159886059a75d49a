// What a [workspace] setup command cannot run without, read from its words.
import { describe, expect, it } from 'vitest';
import { setupInputs } from '../../src/session/setup-inputs.js';

const needs = (command: string) => setupInputs(command).map((i) => [i.step, i.anyOf, i.instead]);

describe('setupInputs', () => {
  it('a frozen install needs its lockfile, and names the install that does without', () => {
    expect(needs('npm ci')).toEqual([
      ['npm ci', ['package-lock.json', 'npm-shrinkwrap.json'], 'npm install --no-package-lock'],
    ]);
    expect(needs('yarn install --frozen-lockfile')).toEqual([
      ['yarn install --frozen-lockfile', ['yarn.lock'], 'yarn install'],
    ]);
    expect(needs('yarn install --immutable')[0]?.[1]).toEqual(['yarn.lock']);
    expect(needs('pnpm install --frozen-lockfile')[0]?.[1]).toEqual(['pnpm-lock.yaml']);
    expect(needs('bun install --frozen-lockfile')[0]?.[1]).toEqual(['bun.lock', 'bun.lockb']);
    expect(needs('uv sync --locked')[0]?.[1]).toEqual(['uv.lock']);
  });

  it("reads each step of a chain, after VAR=value, until one changes directory; pip's -r file", () => {
    expect(needs('CI=1 npm ci --ignore-scripts && npm run build').map((n) => n[0])).toEqual([
      'CI=1 npm ci --ignore-scripts',
    ]);
    expect(needs('python3 -m venv .venv && .venv/bin/pip install -r requirements.txt')).toEqual([
      ['.venv/bin/pip install -r requirements.txt', ['requirements.txt'], null],
    ]);
    expect(needs('cd web && npm ci')).toEqual([]);
  });

  it('asks nothing of an install that resolves, nor of words it cannot read', () => {
    for (const c of ['npm install', 'npm install --no-package-lock', 'yarn', 'pnpm install', 'make deps'])
      expect(needs(c), c).toEqual([]);
    expect(needs('npm ci "$FLAGS"')).toEqual([]);
  });
});
