// What `[state] project` may be: a name every clone of a repository gives
// itself in a shared store. Letters, digits, dots, dashes and underscores, so
// it is also a folder name under the state dir. Here without zod: the
// commands' start-up checks it (src/state/identity.ts), the config schema too.
export const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export const PROJECT_NAME_HELP =
  'must be 1 to 100 letters, digits, dots, dashes or underscores, starting with a letter or digit';
