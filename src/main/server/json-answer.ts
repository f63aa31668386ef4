import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import { backgroundSlices } from '../engine/slice-meter';

// An answer is serialized on the event loop the collector shares. JSON.stringify of GET /api/export's
// answer (up to 16 MB of file in one string) held the loop 60–230 ms at once (issue 38): an answer with
// a string that long is written a piece at a time instead, the loop given back between pieces, with the
// same bytes as JSON.stringify would give (tests/unit/json-answer.test.ts).

/** A top-level string this long (in UTF-16 units) sends its answer in pieces. */
export const LONG_STRING_CHARS = 1 << 20;
/** One piece of it: ~1–3 ms of JSON.stringify on this kind of machine, far under the 20 ms a slice may take. */
export const PIECE_CHARS = 1 << 18;

/** Sends an operation's answer: as Fastify would, or in pieces when it holds a long string. */
export function sendAnswer(reply: FastifyReply, answer: unknown): FastifyReply {
  if (!hasLongString(answer)) return reply.send(answer);
  return reply.type('application/json; charset=utf-8').send(Readable.from(jsonPieces(answer)));
}

function hasLongString(answer: unknown): answer is Record<string, unknown> {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer) || 'toJSON' in answer) return false;
  return Object.values(answer).some((v) => typeof v === 'string' && v.length >= LONG_STRING_CHARS);
}

/** The object's JSON text, a long string's pieces each in a turn of its own. */
export async function* jsonPieces(answer: Record<string, unknown>, pieceChars = PIECE_CHARS): AsyncGenerator<string> {
  let sep = '{';
  for (const [key, value] of Object.entries(answer)) {
    // JSON.stringify leaves these keys out.
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    const head = `${sep}${JSON.stringify(key)}:`;
    sep = ',';
    if (typeof value !== 'string' || value.length < pieceChars) {
      yield head + JSON.stringify(value);
      continue;
    }
    yield head + '"';
    for (let i = 0; i < value.length; ) {
      let end = Math.min(i + pieceChars, value.length);
      // Never between the two halves of a surrogate pair: each half alone would be written as an escape.
      if (end < value.length && end - 1 > i && isHighSurrogate(value.charCodeAt(end - 1))) end--;
      await nextTurn();
      const started = performance.now();
      const piece = JSON.stringify(value.slice(i, end)).slice(1, -1);
      // Health's eventLoop.slices shows it as the job `answer`, beside the export that made the text.
      backgroundSlices.record('answer', performance.now() - started);
      yield piece;
      i = end;
    }
    yield '"';
  }
  yield sep === '{' ? '{}' : '}';
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
