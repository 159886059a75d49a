// Colours for card tones; none at all when NO_COLOR is set (the dashboard
// passes color=false), so only bold/inverse/dim carry meaning then.
import type { Tone } from '../src/dashboard/view/board.js';

export function toneColor(tone: Tone, color: boolean): string | undefined {
  if (!color) return undefined;
  switch (tone) {
    case 'ok':
      return 'green';
    case 'bad':
      return 'red';
    case 'warn':
      return 'yellow';
    case 'active':
      return 'cyan';
    default:
      return undefined;
  }
}

export const paint = (color: boolean, c: string): string | undefined => (color ? c : undefined);
