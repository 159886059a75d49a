// In a shared store every clone of a repository has one name (its remote),
// so the workspace records of many machines sit under it; a free workspace is
// handed out only to the caller whose own path for that number it is: never
// another machine's folder (or another clone's on this one), on both drivers.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { DRIVERS, type DriverFixture } from '../helpers/store-drivers.js';

for (const driver of DRIVERS)
  describe.skipIf(driver.skip)(`${driver.name}: workspaces of two machines under one repository`, () => {
    let f: DriverFixture;
    let a: AsyncStateStore;
    let b: AsyncStateStore;
    beforeEach(async () => {
      f = await driver.make();
      [a, b] = [await f.connect(), await f.connect()];
    });
    afterEach(async () => f.cleanup());

    const at = (machine: string) => (n: number) => `/home/${machine}/state/workspaces/widget/workspace-${n}`;
    const branch = (n: number) => `ii/ws-${n}`;

    it("one machine's free workspace is not handed to the other, which makes its own; each reuses its own", async () => {
      const first = await a.workspaces.acquire('widget', 'sa1', at('alice'), branch);
      expect(first).toMatchObject({ created: true, workspace: { path: at('alice')(1) } });
      await a.workspaces.release(first.workspace.path, 'sa1');

      const theirs = await b.workspaces.acquire('widget', 'sb1', at('bob'), branch);
      expect(theirs).toMatchObject({ created: true, workspace: { path: at('bob')(2) } });
      await b.workspaces.release(theirs.workspace.path, 'sb1');

      const again = await a.workspaces.acquire('widget', 'sa2', at('alice'), branch);
      expect(again).toMatchObject({ created: false, workspace: { path: at('alice')(1), session_id: 'sa2' } });
      const bobs = await b.workspaces.acquire('widget', 'sb2', at('bob'), branch);
      expect(bobs).toMatchObject({ created: false, workspace: { path: at('bob')(2), session_id: 'sb2' } });
    });
  });
