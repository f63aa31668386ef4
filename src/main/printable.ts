// C0 and C1 controls (newline and ESC among them), line/paragraph separators, and every Bidi_Control
// character (the Arabic letter mark, the left-to-right and right-to-left marks, embeddings, isolates):
// what a name or an event in a terminal or a CI log could use to forge a line, recolour or reorder it.
// Also the invisible ones that only hide (zero-width space, word joiner and invisible operators, BOM),
// so two names that print alike are told apart. The zero-width joiner and non-joiner stay: emoji
// sequences and several scripts need them.
// Soft hyphen, Mongolian vowel separator, the Hangul fillers and the tag characters are invisible too
// (tags carry hidden ASCII; the subdivision flags that use them print escaped, a price taken).
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufeff\uffa0\u{e0000}-\u{e007f}]/gu;

/** A V8 stack trace's frame line. */
const STACK_FRAME = /^ {4}at /;

/** A line with its unprintable characters as `\uXXXX`. */
export function printable(line: string): string {
  return line.replace(UNPRINTABLE, (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** A report or message the lab wrote over several lines: its line breaks kept, every other unprintable character escaped. */
export function printableText(text: string): string {
  return text.split('\n').map(printable).join('\n');
}

/**
 * A log line as `serve` prints it, every unprintable character escaped so the names of sources,
 * receivers and plans a config file gave cannot send a terminal escape sequence. A line break is kept
 * only before a stack frame (`    at …`), so a name with a newline in it cannot start a line of its
 * own that reads as the lab's, indented ones included: CI runners read commands after leading space
 * (GitHub Actions' `::error::`).
 */
export function printableLog(text: string): string {
  const lines = text.split('\n');
  return lines.map((line, i) => printable(line) + (i === lines.length - 1 ? '' : STACK_FRAME.test(lines[i + 1]!) ? '\n' : '\\u000a')).join('');
}
