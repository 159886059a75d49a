// The dashboard's banner: a label a launcher puts in the header line through
// II_DASHBOARD_BANNER, read once by the CLI at startup (components get it from
// the store). `ii demo` uses it to say on screen that its jobs run on the
// built-in scripted agent, not a real one.

/** The env variable a launcher sets to show a banner in the dashboard's header. */
export const BANNER_ENV = 'II_DASHBOARD_BANNER';

/**
 * The banner from the environment, or null when unset or blank. Control
 * characters become spaces: the text goes straight to the terminal, and an
 * escape sequence or a newline in it would break the layout (or the terminal).
 */
export function readBanner(env: NodeJS.ProcessEnv): string | null {
  const raw = env[BANNER_ENV];
  if (!raw) return null;
  const text = raw
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text || null;
}
