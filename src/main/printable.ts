// C0 and C1 controls (newline and ESC among them), line/paragraph separators, and every Bidi_Control
// character (the Arabic letter mark, the left-to-right and right-to-left marks, embeddings, isolates):
// what a name or an event in a terminal or a CI log could use to forge a line, recolour or reorder it.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A line with its unprintable characters as `\uXXXX`. */
export function printable(line: string): string {
  return line.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A log line as `serve` prints it: its own line breaks kept (a stack trace reads as one), every other
 * unprintable character escaped, so the names of sources, receivers and plans a config file gave
 * cannot send a terminal escape sequence.
 */
export function printableLog(text: string): string {
  return text.split('\n').map(printable).join('\n');
}
