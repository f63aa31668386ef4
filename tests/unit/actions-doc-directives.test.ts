import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataNotAnObject, mapData } from '../../src/main/engine/actions/mapping-kit';
import { matchesTrigger } from '../../src/main/engine/actions/trigger';
import type { NormalizedCall } from '../../src/shared/types';

// docs/actions.md's "Directives and triggers" section, run: each row's data is mapped by the engine
// (Segment's mapping kit, as the dispatcher maps) and must give the body the page shows, byte for
// byte; each trigger row must take the call or not as the page says.

const doc = readFileSync(join(__dirname, '../../docs/actions.md'), 'utf8');
const start = doc.indexOf('## Directives and triggers');
const section = doc.slice(start, doc.indexOf('\n## ', start + 1) === -1 ? undefined : doc.indexOf('\n## ', start + 1));
const call = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]) as NormalizedCall;
/** A table's rows: the code of each cell (`\|` in a cell is a pipe), or its text. */
const rows = (first: string) =>
  section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith(`| ${first} |`) && !l.startsWith('|---'))
    .map((l) => l.replace(/\\\|/g, '\u0000').split('|').slice(1, -1).map((c) => c.replace(/\u0000/g, '|').trim()))
    .map((cells) => cells.map((c) => /^`([^`]*)`$/.exec(c)?.[1] ?? c));

describe('docs/actions.md: directives and triggers', () => {
  const data = rows('directive').filter((r) => r.length === 3);
  const triggers = rows('trigger').filter((r) => r.length === 2);

  it('has every directive family and a few triggers', () => {
    expect(data.map((r) => r[0])).toEqual(expect.arrayContaining(['@path', '@template', '@literal', '@if', '@case', '@replace', '@arrayPath', '@flatten', '@json', '@merge', '@transform', '@excludeWhenNull', '@liquid']));
    expect(triggers.length).toBeGreaterThanOrEqual(4);
  });

  it('each data sends the body shown', () => {
    for (const [name, mapping, body] of data) {
      const run = () => mapData(JSON.parse(mapping), call);
      if (name === 'not an object') expect(run, name).toThrow(DataNotAnObject);
      else if (name === 'nothing') expect(run().text, name).toBeNull();
      else expect(run().text, name).toBe(body);
    }
  });

  it('each trigger takes the call or not, as shown', () => {
    for (const [fql, takes] of triggers) expect(matchesTrigger(call, fql), fql).toBe(takes === 'yes');
  });
});
