// ii doctor's form of the setup-inputs check (session/setup-check.ts): the
// config's finding, failed, when every job would fail at setup.
import type { Config } from '../model/config.js';
import { setupInputProblem } from '../session/setup-check.js';
import type { Vcs } from '../vcs/vcs.js';
import type { CheckResult } from './checks.js';

/** A failed `config` finding when a setup command's input would be missing in a workspace; null when none is. */
export async function checkSetupInputs(vcs: Vcs, root: string, config: Config): Promise<CheckResult | null> {
  const p = await setupInputProblem(vcs, root, config);
  return p ? { name: 'config', ok: false, ...p } : null;
}
