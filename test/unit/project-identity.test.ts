// A repository's name in a shared store is what all its clones share: the
// same from every clone and worktree however each spelled its remote, with
// no credentials kept; on the local SQLite store it stays its clone's path,
// so the state a user already has is still found.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { currentRepo } from '../../src/cli/context.js';
import { UserError } from '../../src/errors.js';
import { loadConfig } from '../../src/job/config.js';
import { sharedIdentity } from '../../src/state/identity.js';
import { repoSlug } from '../../src/state/paths.js';
import { normaliseRemoteUrl } from '../../src/vcs/remote-url.js';
import { remoteUrlFromConfigText } from '../../src/vcs/remote-config.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

describe('normaliseRemoteUrl', () => {
  it.each([
    'git@github.com:acme/widget.git',
    'git@GitHub.com:acme/widget',
    'ssh://git@github.com/acme/widget.git',
    'ssh://git@github.com:22/acme/widget/',
    'https://github.com/acme/widget',
    'https://user:s3cr%40t@GITHUB.COM/acme/widget.git/',
    'https://tok:x@y@github.com//acme/widget.git',
    'git://github.com/acme/widget.git',
  ])('%s is github.com/acme/widget', (url) => {
    expect(normaliseRemoteUrl(url)).toBe('github.com/acme/widget');
  });

  it('keeps no credentials, keeps the path case, and names local remotes by their absolute path', () => {
    expect(normaliseRemoteUrl('https://bob:hunter2@Git.Example.org/Team/App.git')).toBe(
      'git.example.org/Team/App',
    );
    expect(normaliseRemoteUrl('/srv/git/app.git/')).toBe('file:/srv/git/app');
    expect(normaliseRemoteUrl('file:///srv/git/app.git')).toBe('file:/srv/git/app');
    expect(normaliseRemoteUrl('../app.git', '/home/u/repo')).toBe('file:/home/u/app');
    expect(normaliseRemoteUrl('  ')).toBeNull();
  });
});

describe('remoteUrlFromConfigText', () => {
  it('reads the named remote, the last value winning, with quotes and comments', () => {
    const text = `[core]\n\tbare = false\n[remote "upstream"]\n\turl = git@a:x/y.git\n[remote "origin"]\n\turl = "git@h:a/b.git" ; why\n\turl = git@h:a/c.git # last\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n`;
    expect(remoteUrlFromConfigText(text, 'origin')).toBe('git@h:a/c.git');
    expect(remoteUrlFromConfigText(text, 'upstream')).toBe('git@a:x/y.git');
    expect(remoteUrlFromConfigText(text, 'nope')).toBeNull();
  });

  it('leaves what it does not follow to git: includes, old section forms, continued lines', () => {
    expect(remoteUrlFromConfigText('[include]\n\tpath = other\n', 'origin')).toBe('ask-git');
    expect(remoteUrlFromConfigText('[includeIf "gitdir:~/w/"]\n\tpath = x\n', 'origin')).toBe('ask-git');
    expect(remoteUrlFromConfigText('[remote.origin]\n\turl = x\n', 'origin')).toBe('ask-git');
    expect(remoteUrlFromConfigText('[remote "origin"]\n\turl = a\\\nb\n', 'origin')).toBe('ask-git');
  });
});

describe('a repository in the store', () => {
  let tmp: ReturnType<typeof tempDir>;
  const saved = { ...process.env };
  beforeEach(() => {
    tmp = tempDir('ii-ident-');
    process.env.HOME = tmp.path;
    process.env.XDG_CONFIG_HOME = join(tmp.path, 'config');
    delete process.env.II_DATABASE_URL;
  });
  afterEach(() => {
    process.env = { ...saved };
    tmp.cleanup();
  });

  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const clone = (name: string, remote: string): string => {
    const dir = join(tmp.path, name);
    mkdirSync(dir);
    gitRepo(dir);
    git(dir, 'remote', 'add', 'origin', remote);
    return dir;
  };

  it('on SQLite: by its path, as before (two clones apart); on PostgreSQL: one name from every clone and worktree', () => {
    const a = clone('a', 'git@github.com:acme/widget.git');
    const b = clone('b', 'https://me:pw@github.com/acme/widget');
    const wt = join(tmp.path, 'wt');
    git(a, 'worktree', 'add', '-q', '--detach', wt);
    expect(currentRepo(a).slug).toBe(repoSlug(a));
    expect(currentRepo(b).slug).toBe(repoSlug(b));

    process.env.II_DATABASE_URL = 'postgres://ii@127.0.0.1:1/x';
    const shared = currentRepo(a).slug;
    expect(shared).toMatch(/^widget-[0-9a-f]{8}$/);
    expect(currentRepo(b).slug).toBe(shared);
    expect(currentRepo(wt).slug).toBe(shared);
    expect(sharedIdentity(b)).toMatchObject({
      by: 'remote',
      source: 'github.com/acme/widget',
      remote: 'origin',
    });
    expect(JSON.stringify(sharedIdentity(b))).not.toContain('pw');
  });

  it('[state] url in the user config is PostgreSQL too', () => {
    const a = clone('a', 'git@github.com:acme/widget.git');
    mkdirSync(join(tmp.path, 'config', 'incrementum'), { recursive: true });
    const cfg = join(tmp.path, 'config', 'incrementum', 'config.toml');
    writeFileSync(cfg, '[state]\nurl = "postgres://ii@127.0.0.1:1/x"\n');
    expect(currentRepo(a).slug).toBe(sharedIdentity(a).slug);
    expect(currentRepo(a).slug).not.toBe(repoSlug(a));
    // A password in a file others can read: refused, saying the chmod.
    writeFileSync(cfg, '[state]\nurl = "postgres://ii:hunter2@127.0.0.1:1/x"\n');
    chmodSync(cfg, 0o644);
    let err: unknown;
    try {
      currentRepo(a);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toContain(`chmod 600 ${cfg}`);
    expect((err as Error).message).not.toContain('hunter2');
    chmodSync(cfg, 0o600);
    expect(currentRepo(a).slug).toBe(sharedIdentity(a).slug);
    // The repository's config is committed: a URL there is refused.
    writeFileSync(join(a, 'incrementum.toml'), '[state]\nurl = "postgres://ii@h/x"\n');
    expect(() => loadConfig(a)).toThrow(/Move the URL to ~\/\.config\/incrementum\/config\.toml/);
    writeFileSync(join(a, 'incrementum.toml'), '[state]\nproject = "widget"\n');
    expect(loadConfig(a).state.project).toBe('widget');
    writeFileSync(cfg, '[state]\nproject = "everything"\n');
    expect(() => loadConfig(a)).toThrow(/set it in that repository's incrementum\.toml instead/);
  });

  it('[state] project wins over the remote, [remote] name picks the remote, and with neither: the path', () => {
    const a = clone('a', 'git@github.com:acme/widget.git');
    git(a, 'remote', 'add', 'fork', 'git@github.com:me/widget.git');
    process.env.II_DATABASE_URL = 'postgres://ii@127.0.0.1:1/x';
    writeFileSync(join(a, 'incrementum.toml'), '[remote]\nname = "fork"\n');
    expect(sharedIdentity(a)).toMatchObject({ by: 'remote', source: 'github.com/me/widget', remote: 'fork' });
    // The user's config names the remote when the repository's does not.
    writeFileSync(join(a, 'incrementum.toml'), '[agent]\npreset = "scripted"\n');
    expect(sharedIdentity(a)).toMatchObject({ source: 'github.com/acme/widget', remote: 'origin' });
    mkdirSync(join(tmp.path, 'config', 'incrementum'), { recursive: true });
    writeFileSync(join(tmp.path, 'config', 'incrementum', 'config.toml'), '[remote]\nname = "fork"\n');
    expect(sharedIdentity(a)).toMatchObject({ source: 'github.com/me/widget', remote: 'fork' });
    writeFileSync(join(a, 'incrementum.toml'), '[state]\nproject = "widget-app"\n');
    expect(currentRepo(a).slug).toBe('widget-app');
    writeFileSync(join(a, 'incrementum.toml'), '[state]\nproject = "../etc"\n');
    expect(() => currentRepo(a)).toThrow(/\[state\] project must be/);
    const lone = join(tmp.path, 'lone');
    mkdirSync(lone);
    gitRepo(lone);
    expect(sharedIdentity(lone)).toMatchObject({ by: 'path', slug: repoSlug(lone) });
  });

  it('a remote set through an include is asked of git', () => {
    const a = clone('a', 'git@github.com:acme/widget.git');
    git(a, 'remote', 'remove', 'origin');
    writeFileSync(
      join(tmp.path, 'extra.gitconfig'),
      '[remote "origin"]\n\turl = git@github.com:acme/other.git\n',
    );
    git(a, 'config', 'include.path', join(tmp.path, 'extra.gitconfig'));
    expect(sharedIdentity(a)).toMatchObject({ by: 'remote', source: 'github.com/acme/other' });
  });
});
