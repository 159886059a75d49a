// Agent- and test-derived text on its way to a person: secrets redacted
// (redact.ts), then control characters made visible (sanitize.ts). Redaction
// comes first and runs on the whole text, as a private key block spans lines.
import { redact } from './redact.js';
import { visibleLine, visibleText } from './sanitize.js';

/** Multi-line text to print or render: redacted, control characters escaped, newlines kept. */
export const shownText = (s: string): string => visibleText(redact(s));

/** A one-line field (a title, a reason in a cell): redacted, and every control character escaped. */
export const shownLine = (s: string): string => visibleLine(redact(s));

/** The text's lines, each shown, for views that lay text out line by line. */
export const shownLines = (s: string): string[] => shownText(s).split('\n');
