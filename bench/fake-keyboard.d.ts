export type { OffScreenKeyboard as FakeKeyboard } from '../src/cli/dashboard/off-screen.js';
export { offScreenKeyboard as fakeKeyboard } from '../src/cli/dashboard/off-screen.js';
