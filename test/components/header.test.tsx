// The header line: where the user is, a launcher's banner (ii demo says its
// agent is scripted), and the help hint, fitted to the terminal's width.
import { describe, expect, it } from 'vitest';
import { fitHeader } from '../../components/Header.js';
import { DEMO_BANNER } from '../../src/cli/demo/run.js';
import { BANNER_ENV, readBanner } from '../../src/cli/dashboard/banner.js';
import { frameWith, KEY, makeJob, dashboards, type DashFixture } from '../helpers/dash-fixture.js';
import { shortJobId } from '../../src/model/job-id.js';

const board = dashboards();

async function open(f: DashFixture, banner: string | null, size = { columns: 80, rows: 24 }) {
  f.dash.setState({ banner });
  return board.render(f, size);
}

const firstLine = (frame: string) => frame.split('\n')[0]!;

describe('the header banner', () => {
  it("shows the demo's banner whole at 80 columns, beside the breadcrumb and the help hint", async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'some job' });
    const { lastFrame } = await open(fx, DEMO_BANNER);
    const top = firstLine(await frameWith(lastFrame, 'some job'));
    expect(top).toContain(`incrementum · Jobs · ${DEMO_BANNER}`);
    expect(top).toContain('? help');
    expect(top.length).toBeLessThanOrEqual(80);
  });

  it('cuts a long banner with an ellipsis, keeping the breadcrumb, at every level', async () => {
    const fx = board.fixture();
    const job = makeJob(fx.state, { title: 'deep job', changes: 1, iterations: 2, review: 'ACCEPT' });
    const long = `demo: ${'a very long label '.repeat(8)}END`;
    const { lastFrame, stdin } = await open(fx, long);
    let top = firstLine(await frameWith(lastFrame, 'deep job', '…'));
    expect(top).toMatch(/^incrementum · Jobs · demo: a very long label .*… +\? help$/);
    expect(top).not.toContain('END');
    expect(top.length).toBeLessThanOrEqual(80);
    stdin.write(KEY.enter);
    top = firstLine(await frameWith(lastFrame, `job ${shortJobId(job.id)}`));
    expect(top).toContain('· demo: a very');
    expect(top.length).toBeLessThanOrEqual(80);
    stdin.write(KEY.enter);
    top = firstLine(await frameWith(lastFrame, 'change 1'));
    expect(top).toContain('· demo:');
    stdin.write(KEY.enter);
    top = firstLine(await frameWith(lastFrame, 'draft message:'));
    // The deepest breadcrumb is whole; the banner still says something.
    expect(top).toMatch(/^incrementum · Jobs › job [0-9a-f]{8} › change 1 › iteration \d · demo:/);
    expect(top.length).toBeLessThanOrEqual(80);
  });

  it('is the plain header with no banner', async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'plain' });
    const { lastFrame } = await open(fx, null);
    const top = firstLine(await frameWith(lastFrame, 'plain'));
    expect(top).toMatch(/^incrementum · Jobs +\? help$/);
  });
});

describe('fitHeader', () => {
  it('never makes a line wider than the screen, and gives up the help hint before the banner', () => {
    const crumbs = ['Jobs', 'job abcdef1', 'change 12', 'iteration 3', 'diff'];
    for (let width = 10; width <= 200; width++) {
      const h = fitHeader(crumbs, DEMO_BANNER, width);
      const line = h.title + h.banner + h.gap + h.help;
      expect(line.length, `width ${width}`).toBeLessThanOrEqual(width);
      if (h.banner) expect(h.banner.startsWith(' · demo')).toBe(true);
      if (width >= 80) expect(h.banner).not.toBe('');
    }
    // Wide enough: all of it. Narrow: the banner cut, the hint gone, still readable.
    expect(fitHeader(crumbs, DEMO_BANNER, 200).banner).toBe(` · ${DEMO_BANNER}`);
    const narrow = fitHeader(crumbs, DEMO_BANNER, 82);
    expect(narrow.help).toBe('');
    expect(narrow.banner).toMatch(/^ · demo .*…$/);
  });
});

describe('readBanner', () => {
  it('reads II_DASHBOARD_BANNER once, blank means none, control characters cannot reach the terminal', () => {
    expect(readBanner({})).toBeNull();
    expect(readBanner({ [BANNER_ENV]: '   ' })).toBeNull();
    expect(readBanner({ [BANNER_ENV]: ' demo · scripted ' })).toBe('demo · scripted');
    expect(readBanner({ [BANNER_ENV]: 'a\x1b[31mred\nline\x07' })).toBe('a [31mred line');
  });
});
