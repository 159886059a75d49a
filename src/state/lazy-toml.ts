// smol-toml, loaded only when a config file may hold what start-up needs
// ([state] url, [state] project): the package stays out of a short command's
// start (test/e2e/cli-startup.test.ts), where an import would load it always.
import { createRequire } from 'node:module';

type Parse = (text: string) => Record<string, unknown>;
let parse: Parse | null = null;

export function parseTomlLazily(text: string): Record<string, unknown> {
  parse ??= (createRequire(import.meta.url)('smol-toml') as { parse: Parse }).parse;
  return parse(text);
}
