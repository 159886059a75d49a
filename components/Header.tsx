import { Text } from 'ink';
import { visibleLine } from '../src/text/sanitize.js';
import { paint } from './tone.js';

export interface HeaderProps {
  /** Where the user is: Jobs, then the job, change, iteration and overlay drilled into. */
  crumbs: string[];
  /** A launcher's label (ii demo says its agent is scripted), or null. */
  banner: string | null;
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
): { title: string; banner: string; gap: string; help: string } {
  const full = `incrementum · ${crumbs.join(' › ')}`;
  // On a screen too narrow even for the breadcrumb, it is cut like the banner.
  const title = full.length <= width - 2 ? full : cut(full, Math.max(1, width - 2));
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
  const gap = ' '.repeat(Math.max(help ? 1 : 0, width - 2 - f.title.length - f.banner.length - help.length));
  return { title: f.title, banner: f.banner, gap, help };
}

/** The top line: the breadcrumb, the launcher's banner if any, and the help hint. */
export function Header({ crumbs, banner, width, color }: HeaderProps) {
  const h = fitHeader(crumbs, banner === null ? null : visibleLine(banner), width);
  return (
    <Text bold wrap="truncate-end">
      {h.title}
      {h.banner ? <Text color={paint(color, 'yellow')}>{h.banner}</Text> : null}
      {h.gap}
      {h.help}
    </Text>
  );
}
