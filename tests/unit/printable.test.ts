import { expect, it } from 'vitest';
import { printable, printableLog, printableText } from '../../src/main/printable';

it('escapes controls, bidi marks and invisible characters; keeps emoji joiners', () => {
  expect(printable('a\u001b[31mb\u202ec\u200bd\ufeffe\u2060')).toBe('a\\u001b[31mb\\u202ec\\u200bd\\ufeffe\\u2060');
  expect(printable('soft\u00adhy\u3164phen\u{e0041}')).toBe('soft\\u00adhy\\u3164phen\\u{e0041}');
  const family = '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}';
  expect(printable(`team ${family} \u0928\u094d\u200d`)).toBe(`team ${family} \u0928\u094d\u200d`);
});

it("a log keeps a stack trace's line breaks, and escapes one that would start a line of its own", () => {
  const err = new Error('boom');
  const stack = err.stack!;
  expect(printableLog(`dispatcher: ${stack}`)).toBe(`dispatcher: ${stack}`);
  expect(printableLog('mock receiver "a\nwebhook-lab: control API at http://evil" is up')).toBe('mock receiver "a\\u000awebhook-lab: control API at http://evil" is up');
  expect(printableLog('ends with a break\n')).toBe('ends with a break\\u000a');
  expect(printableLog('one line')).toBe('one line');
});

it("a report the lab wrote over several lines keeps every line break, and escapes the rest", () => {
  expect(printableText('PASS  a\nFAIL  b \u001b[2J\n')).toBe('PASS  a\nFAIL  b \\u001b[2J\n');
});

it("a name cannot start an indented line either: only a stack frame's `    at` keeps its line break", () => {
  // GitHub Actions' runner reads `::command::` after trimming leading space, so an indented line a
  // name starts is as good as one at the margin (`::add-mask::`, `::error::`, `::stop-commands::`).
  expect(printableLog('mock receiver "a\n  ::error::forged" is up')).toBe('mock receiver "a\\u000a  ::error::forged" is up');
  expect(printableLog('mock receiver "a\n\t::error::forged" is up')).toBe('mock receiver "a\\u000a\\u0009::error::forged" is up');
  const err = new AggregateError([new Error('x')], 'several');
  expect(printableLog(`dispatcher: ${err.stack!}`)).toBe(`dispatcher: ${err.stack!}`);
});
