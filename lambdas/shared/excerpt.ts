/**
 * Printable, single-line, short: text that came from outside (a receiver's answer, a carrier's
 * error message) as the service keeps and shows it. Control characters become spaces, runs of
 * spaces one, and at most `max` characters are kept.
 */
export const excerpt = (text: string, max: number): string =>
  [...text]
    .map((char) => (char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f ? ' ' : char))
    .join('')
    .replace(/ {2,}/g, ' ')
    .trim()
    .slice(0, max);
