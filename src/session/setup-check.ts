// Whether [workspace] setup can work in a workspace: what its commands need (a frozen install's lockfile, setup-inputs.ts) is in a fresh
// checkout of the base, or copied in by [workspace] copy. The user's checkout
// is no proof: it may hold a lockfile .gitignore keeps out of every commit,
// and then every job fails at setup while `ok config` said all was well.
// ii doctor reports it as the config's finding; ii job do and ii run refuse
// to start (checkLaunch), so no todo spends an attempt on a setup that
// cannot work.
import { existsSync } from 'node:fs';
import { join, normalize, sep } from 'node:path';
import type { Config } from '../model/config.js';
import { setupInputs, type SetupInput } from './setup-inputs.js';
import type { Vcs } from '../vcs/vcs.js';

const quote = (s: string) => `\`${s}\``;
const either = (names: string[]) =>
  names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names.at(-1)!}`;
const neither = (names: string[]) =>
  names.length === 1 ? 'does not have it' : names.length === 2 ? 'has neither' : 'has none of them';

/** Whether [workspace] copy brings `path` from the checkout (listed itself, or a folder holding it). */
function copied(root: string, copy: string[], path: string): boolean {
  const p = normalize(path);
  return copy.some((c) => {
    const n = normalize(c).replace(/[/\\]+$/, '');
    return (p === n || p.startsWith(n + sep)) && existsSync(join(root, p));
  });
}

/** What is wrong, and what to do. */
export interface SetupProblem {
  detail: string;
  fix: string;
}

/**
 * Why a setup command's input would be missing in a workspace started at
 * `base` (by default the one a job would start from now); null when none is.
 */
export async function setupInputProblem(
  vcs: Vcs,
  root: string,
  config: Config,
  given?: { sha: string; ref: string },
): Promise<SetupProblem | null> {
  const needs: SetupInput[] = config.workspace.setup.flatMap(setupInputs);
  if (needs.length === 0) return null;
  let base: { sha: string; ref: string };
  try {
    base = given ?? (await vcs.resolveBase(root));
  } catch {
    return null; // no commit yet: ii doctor's repo finding and checkLaunch's base check say so
  }
  for (const need of needs) {
    const at = await vcs.filesAt(root, base.sha, need.anyOf);
    if (at.length > 0 || need.anyOf.some((f) => copied(root, config.workspace.copy, f))) continue;
    const here = need.anyOf.filter((f) => existsSync(join(root, f)));
    const rules = await vcs.ignoreRules(root, here);
    const why = here.map((f) => {
      const rule = rules.get(f);
      return `${f} is in this checkout but not committed${rule ? ` (${rule} ignores it)` : ''}`;
    });
    const fixes = [
      here.length
        ? // -f past the ignore rule; once committed, the rule no longer applies to it.
          `Commit ${here[0]} (git add ${rules.has(here[0]!) ? '-f ' : ''}${here[0]} && git commit)`
        : `Commit ${either(need.anyOf)}`,
      ...(need.instead ? [`set [workspace] setup to ${quote(need.instead)} in incrementum.toml`] : []),
      ...(here.length && !need.instead ? [`list ${here[0]} in [workspace] copy`] : []),
    ];
    return {
      detail:
        `[workspace] setup ${quote(need.step)} needs ${either(need.anyOf)}, and a fresh checkout of ${base.ref} ${neither(need.anyOf)}: every job would fail at setup, before its first prompt` +
        (why.length ? `\n${why.join('\n')}` : ''),
      fix: `${fixes.join(', or ')}.`,
    };
  }
  return null;
}
