import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/main/engine/seeded-random';
import { jsonPieces } from '../../src/main/server/json-answer';

async function joined(answer: Record<string, unknown>, pieceChars: number): Promise<{ text: string; pieces: string[] }> {
  const pieces: string[] = [];
  for await (const p of jsonPieces(answer, pieceChars)) pieces.push(p);
  return { text: pieces.join(''), pieces };
}

// Seeded so a failure can be replayed: the characters JSON escapes, astral ones, and lone surrogates.
function seededText(seed: number, length: number): string {
  const next = mulberry32(seed);
  const alphabet = ['a', '"', '\\', '\n', '\u0000', '\u001f', '\u2028', 'é', '€', '😀', '\ud800', '\udfff', '/', ' '];
  let s = '';
  while (s.length < length) s += alphabet[Math.floor(next() * alphabet.length)];
  return s;
}

describe('an answer written in pieces (jsonPieces)', () => {
  it('is the same text JSON.stringify gives, whatever the cut falls on', async () => {
    const seed = Number(process.env.JSON_ANSWER_SEED ?? 4242);
    console.log(`json-answer seed: ${seed} (JSON_ANSWER_SEED to replay)`);
    for (let round = 0; round < 50; round++) {
      const content = seededText(seed + round, 500 + round * 37);
      const answer = { filename: 'f "1".jsonl', contentType: 'application/x-ndjson', content, n: round, nested: { a: [1, null] }, gone: undefined };
      for (const pieceChars of [2, 3, 7, 64, 10_000]) {
        const { text } = await joined(answer, pieceChars);
        expect(text, `seed ${seed + round}, pieces of ${pieceChars}`).toBe(JSON.stringify(answer));
      }
    }
  });

  it('cuts a long string into pieces of at most the size given, never inside a surrogate pair', async () => {
    const content = '😀'.repeat(1000);
    const { text, pieces } = await joined({ content }, 101);
    expect(text).toBe(JSON.stringify({ content }));
    expect(pieces.length).toBeGreaterThan(15);
    expect(text).not.toMatch(/\\ud/);
  });

  it('an empty object is {}', async () => {
    expect((await joined({}, 10)).text).toBe('{}');
    expect((await joined({ x: undefined }, 10)).text).toBe('{}');
  });
});
