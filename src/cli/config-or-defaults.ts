// The config for a command that only reads with it (ii todo list's [run]
// max-attempts): a config that cannot be loaded is warned about once and the
// defaults are used, so a typo in incrementum.toml does not hide the todos and
// jobs from a person come to fix it. The commands that act on it (ii job do,
// ii run, ii doctor) still stop on it, saying the same.
import { UserError } from '../errors.js';
import { loadConfig } from '../job/config.js';
import { Config } from '../model/config.js';

let warned = false;

/** The repo's config, or the defaults after one warning on stderr naming what is wrong and how to fix it. */
export function configOrDefaults(root: string, command: string): Config {
  try {
    return loadConfig(root);
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    if (!warned) {
      warned = true;
      const msg = err.message.trimEnd();
      const hasFix = /\n(Fix|Make|Run)\b[^\n]*$/.test(msg);
      const fix = hasFix
        ? ''
        : msg.startsWith('cannot read config')
          ? '\nMake the file readable (check its permissions and owner), or move it aside.'
          : '\nFix the file at the place shown (`ii init --print` shows a commented example), or move it aside.';
      process.stderr.write(
        `ii: warning: ${msg}${fix}\n` +
          `${command} goes on with the default settings; ii job do, ii run and ii doctor stop until the file is fixed.\n`,
      );
    }
    return Config.parse({});
  }
}
