// A keyboard for Ink on a fake terminal: the stdin Ink reads keys from, with
// press() for the bench or test pressing them. Shared by bench/ink-keys.js,
// bench/dashboard-rss.child.js and test/components/ink-key-frames.test.tsx;
// the one the board's warm-up presses off screen (src/cli/dashboard/off-screen.ts).
export { offScreenKeyboard as fakeKeyboard } from '../dist/src/cli/dashboard/off-screen.js';
