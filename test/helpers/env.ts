import { join } from 'node:path';

/** A git identity for the commits a test makes, whatever the machine's git config says. */
export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
};

/**
 * The environment a test runs `ii` in (ii() lays it over process.env): its
 * state, config and home in `home` (a temp dir), never the person's, and
 * GIT_IDENTITY for the commits its jobs make; `extra` is laid over that.
 */
export function testEnv<E extends NodeJS.ProcessEnv = Record<never, string>>(
  home: string,
  extra?: E,
): typeof GIT_IDENTITY & { XDG_STATE_HOME: string; XDG_CONFIG_HOME: string; HOME: string } & E {
  return {
    XDG_STATE_HOME: join(home, 'state'),
    XDG_CONFIG_HOME: join(home, 'config'),
    HOME: home,
    ...GIT_IDENTITY,
    ...(extra as E),
  };
}
