import { z } from 'zod';
import type { Attempt, CallDetail } from '../../shared/types';
import { MAX_TEXT_CHARS, MORE_HEADERS } from './redact';

// A call's detail as get_call and wait_for_call answer it (issue 39: answers fit an agent's context).
// A delivery retried for hours to five URLs keeps hundreds of attempts (198 made one answer of 354K
// characters); an agent needs how each URL began and how it is going now. So for each URL of a
// delivery: its first attempt and its last four; the older ones' bodies (a receiver's answer, an
// edited replay's bytes) are cut to 2 KB, the last attempt's keeps the 16 KB every answer allows.
// Then the whole is held to a budget (fitDetail). What was left out is said.

/** Attempts shown for each URL of a delivery: the first, and the last ones up to this many in all. */
export const ATTEMPTS_PER_URL = 5;
/** The longest body an attempt other than a URL's last carries whole. */
export const OLDER_BODY_CHARS = 2 * 1024;
/**
 * A call's detail in an answer, as JSON, at most about this long (the answer carries it twice: as
 * structuredContent and as text). Five URLs with a 16 KB answer each, a 30 KB call as received and
 * as normalized made 600 KB (found by a review); past this, the detail is cut further, step by step.
 * A call of 32 KB (the most the collector takes) sent to one URL keeps its call as received and
 * normalized (strings cut at 16 KB); its body sent may be cut to 4 KB.
 */
export const DETAIL_BUDGET_CHARS = 48 * 1024;
/** A value (a call as received, as normalized) whose JSON is longer is cut to this much of its text once the detail is over budget. */
const VALUE_CHARS = 4 * 1024;
/** Once over budget, the strings inside a call as received and as normalized are cut to this. */
const STRING_CHARS = 2 * 1024;

export const attemptsCutOutput = z.array(
  z.object({ deliveryId: z.number().int(), urlIndex: z.number().int(), shown: z.number().int(), of: z.number().int() }),
);
export type AttemptsCut = z.infer<typeof attemptsCutOutput>;

function cutTo(max: number, text: string, why: string): string;
function cutTo(max: number, text: string | null | undefined, why: string): string | null | undefined;
function cutTo(max: number, text: string | null | undefined, why: string): string | null | undefined {
  return text && text.length > max ? `${text.slice(0, max)}… [cut: ${text.length - max} more characters; ${why}]` : text;
}
const cut = (text: string | null | undefined) => cutTo(OLDER_BODY_CHARS, text, "an older attempt: the call's permalink shows it whole");

/** Once over budget, a header map keeps this many entries, each cut to this long (redact.ts's bounds are larger). */
const FEW_HEADERS = 12;
const HEADER_CHARS = 256;

function fewHeaders<T extends Record<string, string> | null>(h: T): T {
  if (h === null) return h;
  const entries = Object.entries(h);
  const kept = Object.fromEntries(entries.slice(0, FEW_HEADERS).map(([k, v]) => [k, cutTo(HEADER_CHARS, v, TOO_LONG)]));
  if (entries.length > FEW_HEADERS) kept[MORE_HEADERS] = `${entries.length - FEW_HEADERS} more headers, not shown`;
  return kept as T;
}

function olderAttempt(a: Attempt): Attempt {
  const out: Attempt = { ...a, responseBody: cut(a.responseBody) ?? null };
  if (a.requestBody !== undefined) out.requestBody = cut(a.requestBody) ?? undefined;
  return out;
}

/** An attempt once the answer is over budget: its bodies as an older attempt's, its header maps few. */
const fittedAttempt = (a: Attempt): Attempt => ({ ...olderAttempt(a), requestHeaders: fewHeaders(a.requestHeaders), responseHeaders: fewHeaders(a.responseHeaders) });

/** Every string in a JSON value cut to STRING_CHARS; its shape kept. */
function cutStrings(v: unknown): unknown {
  if (typeof v === 'string') return cutTo(STRING_CHARS, v, TOO_LONG);
  if (Array.isArray(v)) return v.map(cutStrings);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cutStrings(x)]));
  return v;
}

const TOO_LONG = 'the answer was too long: the call\'s permalink shows it whole';
/** The JSON's length as an answer carries it: every string cut at 16 KB by redact.ts on the way out. */
const size = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'string' && x.length > MAX_TEXT_CHARS ? x.slice(0, MAX_TEXT_CHARS + 100) : x)).length;

/**
 * The detail as an answer carries it: each URL's attempts bounded (boundAttempts); then, while it is
 * over DETAIL_BUDGET_CHARS, every attempt's bodies cut to 2 KB and the deliveries' to 4 KB, the
 * strings of the call as received and normalized cut to 2 KB, then those two given as the first 4 KB
 * of their JSON, and each URL's attempts down to its last. `cut` lists the steps taken, for the answer's text.
 */
export function fitDetail(whole: CallDetail): { detail: CallDetail; attemptsCut: AttemptsCut; cut: string[] } {
  let { detail, attemptsCut } = boundAttempts(whole);
  const steps: string[] = [];
  if (size(detail) > DETAIL_BUDGET_CHARS) {
    steps.push("every attempt's bodies cut to 2 KB, each delivery's body to 4 KB, and header maps to 12 headers of 256 characters");
    detail = {
      ...detail,
      deliveries: detail.deliveries.map((d) => ({
        ...d,
        body: cutTo(VALUE_CHARS, d.body, TOO_LONG),
        urls: d.urls.map((u) => ({ ...u, headers: fewHeaders(u.headers) })),
        attempts: d.attempts.map(fittedAttempt),
      })),
    };
  }
  if (size(detail) > DETAIL_BUDGET_CHARS) {
    steps.push('strings in call.raw and call.normalized cut to 2 KB');
    detail = { ...detail, call: { ...detail.call, raw: cutStrings(detail.call.raw) as never, normalized: cutStrings(detail.call.normalized) as never } };
  }
  if (size(detail) > DETAIL_BUDGET_CHARS) {
    const call = { ...detail.call } as CallDetail['call'] & Record<string, unknown>;
    for (const key of ['raw', 'normalized'] as const) {
      const text = call[key] === undefined ? undefined : JSON.stringify(call[key]);
      if (text && text.length > VALUE_CHARS) {
        call[key] = cutTo(VALUE_CHARS, text, TOO_LONG) as never;
        steps.push(`call.${key} given as the first 4 KB of its JSON`);
      }
    }
    detail = { ...detail, call };
  }
  if (size(detail) > DETAIL_BUDGET_CHARS) {
    steps.push("each URL's last attempt only");
    const cutNow: AttemptsCut = [];
    detail = {
      ...detail,
      deliveries: detail.deliveries.map((d) => {
        const last = new Map<number, Attempt>();
        for (const a of d.attempts) last.set(a.urlIndex, a);
        const of = (u: number) => attemptsCut.find((x) => x.deliveryId === d.id && x.urlIndex === u)?.of ?? d.attempts.filter((a) => a.urlIndex === u).length;
        for (const u of last.keys()) if (of(u) > 1) cutNow.push({ deliveryId: d.id, urlIndex: u, shown: 1, of: of(u) });
        return { ...d, attempts: d.attempts.filter((a) => last.get(a.urlIndex) === a) };
      }),
    };
    attemptsCut = cutNow;
  }
  return { detail, attemptsCut, cut: steps };
}

/** Attempts of a replay as an answer carries them: their bodies cut to 2 KB and their headers as get_call's when the whole is over budget. */
export function fitAttempts(attempts: Attempt[]): Attempt[] {
  return size(attempts) > DETAIL_BUDGET_CHARS ? attempts.map(fittedAttempt) : attempts;
}

/** The detail with each URL's attempts bounded, and what was left out. */
export function boundAttempts(detail: CallDetail): { detail: CallDetail; attemptsCut: AttemptsCut } {
  const attemptsCut: AttemptsCut = [];
  const deliveries = detail.deliveries.map((d) => {
    const byUrl = new Map<number, Attempt[]>();
    for (const a of d.attempts) byUrl.set(a.urlIndex, [...(byUrl.get(a.urlIndex) ?? []), a]);
    const keep = new Set<Attempt>();
    const lastOfUrl = new Set<Attempt>();
    for (const [urlIndex, list] of byUrl) {
      const shown = list.length <= ATTEMPTS_PER_URL ? list : [list[0], ...list.slice(-(ATTEMPTS_PER_URL - 1))];
      for (const a of shown) keep.add(a);
      lastOfUrl.add(list[list.length - 1]);
      if (shown.length < list.length) attemptsCut.push({ deliveryId: d.id, urlIndex, shown: shown.length, of: list.length });
    }
    // In the order they were made, as the detail has them.
    const attempts = d.attempts.filter((a) => keep.has(a)).map((a) => (lastOfUrl.has(a) ? a : olderAttempt(a)));
    return { ...d, attempts };
  });
  return { detail: { ...detail, deliveries }, attemptsCut };
}

/** The cut in words, for get_call's text. */
export function attemptsCutText(c: AttemptsCut, steps: string[] = []): string {
  const parts = c.map((x) => `delivery ${x.deliveryId} URL ${x.urlIndex + 1}: ${x.shown} of ${x.of} attempts (${x.shown === 1 ? 'the latest' : 'the first and the latest'})`);
  const attempts = parts.length === 0 ? '' : ` Attempts shown: ${parts.join('; ')}; every attempt is in the lab's Inspector.`;
  return `${attempts}${steps.length === 0 ? '' : ` To fit: ${steps.join('; ')}.`}`;
}
