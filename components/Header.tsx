import { Text } from 'ink';
import { visibleLine } from '../src/text/sanitize.js';
import { paint } from './tone.js';

export interface HeaderProps {
  /** Where the user is: Jobs, then the job, change, iteration and overlay drilled into. */
  crumbs: string[];
  /** A launcher's label (ii demo says its agent is scripted), or null. */
  banner: string | null;
  /** The backlog runner's state, in full and short (runLine), or null when there is no backlog. */
  run?: { full: string; short: string } | null;
  /** Jobs waiting for a person's answer: the count leads the header (after the breadcrumb) while any wait. */
  needsYou?: number;
  width: number;
  color: boolean;
}

const HELP = '? help';
/** Below this many columns a banner says too little to be worth showing cut. */
const MIN_BANNER = 8;

const cut = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1)).trimEnd()}…`;

/**
 * The parts of the header line, fitted to `width`: the breadcrumb keeps its
 * room, the banner is cut with an ellipsis to what is left, and the `? help`
 * hint (also in the status bar) gives way to the banner on a narrow screen.
 */
export function fitHeader(
  crumbs: string[],
  banner: string | null,
  width: number,
  run: { full: string; short: string } | null = null,
  needsYou = 0,
): { title: string; needs: string; banner: string; run: string; gap: string; help: string } {
  const full = `incrementum · ${crumbs.join(' › ')}`;
  // The count of waiting jobs is never cut: the breadcrumb gives way to it.
  const needs = needsYou > 0 ? ` · ${needsYou} need${needsYou === 1 ? 's' : ''} you` : '';
  const room = width - 2 - needs.length;
  // On a screen too narrow even for the breadcrumb, it is cut like the banner.
  const title = (full.length <= room ? full : cut(full, Math.max(1, room))) + needs;
  const fit = (help: string) => {
    // Two columns stay free at the right edge, as before there were banners.
    const room = width - 2 - title.length - (help ? help.length + 1 : 0);
    if (!banner) return { title, banner: '' };
    const sep = ' · ';
    const max = room - sep.length;
    return { title, banner: max >= MIN_BANNER || banner.length <= max ? sep + cut(banner, max) : '' };
  };
  let help = HELP;
  let f = fit(help);
  if (banner && !f.banner) {
    help = '';
    f = fit(help);
  }
  // The runner's state takes what the banner left: in full, else short, else
  // in place of the help hint (the status bar has it too).
  const left = (h: string) => width - 2 - f.title.length - f.banner.length - (h ? h.length + 1 : 0);
  let runText = '';
  if (run) {
    for (const h of [help, '']) {
      const fits = [run.full, run.short].find((r) => ` · ${r}`.length <= left(h));
      if (fits) {
        runText = ` · ${fits}`;
        help = h;
        break;
      }
    }
  }
  const used = f.title.length + f.banner.length + runText.length + help.length;
  const gap = ' '.repeat(Math.max(help ? 1 : 0, width - 2 - used));
  return {
    title: f.title.slice(0, f.title.length - needs.length),
    needs,
    banner: f.banner,
    run: runText,
    gap,
    help,
  };
}

/** The top line: the breadcrumb, the launcher's banner if any, and the help hint. */
export function Header({ crumbs, banner, run = null, needsYou = 0, width, color }: HeaderProps) {
  const h = fitHeader(crumbs, banner === null ? null : visibleLine(banner), width, run, needsYou);
  return (
    <Text bold wrap="truncate-end">
      {h.title}
      {h.needs ? (
        <Text color={paint(color, 'yellow')} inverse={!color}>
          {h.needs}
        </Text>
      ) : null}
      {h.banner ? <Text color={paint(color, 'yellow')}>{h.banner}</Text> : null}
      {h.run ? <Text color={paint(color, 'cyan')}>{h.run}</Text> : null}
      {h.gap}
      {h.help}
    </Text>
  );
}
