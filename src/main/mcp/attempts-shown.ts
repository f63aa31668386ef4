import { z } from 'zod';
import type { Attempt, CallDetail } from '../../shared/types';

// get_call's attempts, bounded (issue 39: answers fit an agent's context). A delivery retried for
// hours to five URLs keeps hundreds of attempts (198 made one answer of 354K characters); an agent
// needs how each URL began and how it is going now. So for each URL of a delivery: its first attempt
// and its last four; the older ones' bodies (a receiver's answer, an edited replay's bytes) are cut
// to 2 KB, the last attempt's keeps the 16 KB every answer allows. What was left out is said.

/** Attempts shown for each URL of a delivery: the first, and the last ones up to this many in all. */
export const ATTEMPTS_PER_URL = 5;
/** The longest body an attempt other than a URL's last carries whole. */
export const OLDER_BODY_CHARS = 2 * 1024;

export const attemptsCutOutput = z.array(
  z.object({ deliveryId: z.number().int(), urlIndex: z.number().int(), shown: z.number().int(), of: z.number().int() }),
);
export type AttemptsCut = z.infer<typeof attemptsCutOutput>;

const cut = (text: string | null | undefined): string | null | undefined =>
  text && text.length > OLDER_BODY_CHARS ? `${text.slice(0, OLDER_BODY_CHARS)}… [cut: ${text.length - OLDER_BODY_CHARS} more characters; an older attempt: the call's permalink shows it whole]` : text;

function olderAttempt(a: Attempt): Attempt {
  const out: Attempt = { ...a, responseBody: cut(a.responseBody) ?? null };
  if (a.requestBody !== undefined) out.requestBody = cut(a.requestBody) ?? undefined;
  return out;
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
export function attemptsCutText(c: AttemptsCut): string {
  if (c.length === 0) return '';
  const parts = c.map((x) => `delivery ${x.deliveryId} URL ${x.urlIndex + 1}: ${x.shown} of ${x.of} attempts (the first and the latest)`);
  return ` Attempts shown: ${parts.join('; ')}; every attempt is in the lab's Inspector.`;
}
