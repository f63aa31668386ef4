import type { OpName } from '../../shared/api.contract';

// Web mode: first-page/first-page.ts (inlined, run ahead of the bundle) may already have asked for the
// inspector's first page, and read its body while the bundle was still loading. The HTTP transport
// answers its first call of that operation with that input from it.

export interface EarlyAnswer {
  status: number;
  body: string;
}

export interface EarlyRequest {
  op: OpName;
  input: Record<string, unknown>;
  /** Rejects on a network error: the transport then asks again itself. */
  answer: Promise<EarlyAnswer>;
}

/** The rows first-page.ts painted: the call a click on one of them picked, and who to tell of later clicks. */
export interface FirstRows {
  picked: number | null;
  pick: ((id: number) => void) | null;
}

declare global {
  interface Window {
    __webhookLabEarly?: EarlyRequest;
    __webhookLabFirstRows?: FirstRows;
  }
}

/** Takes the early request, once; null when there is none (desktop app, other first screen, no token). */
export function takeEarlyRequest(win: Pick<Window, '__webhookLabEarly'> = window): EarlyRequest | null {
  const early = win.__webhookLabEarly ?? null;
  delete win.__webhookLabEarly;
  return early;
}

/** Same query as far as HTTP is concerned: absent, undefined and null fields are all left out. */
export function sameQuery(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const fields = (o: Record<string, unknown>) =>
    Object.entries(o)
      .filter(([, v]) => v !== undefined && v !== null)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
      .map(([k, v]) => `${k}=${String(v)}`)
      .join('&');
  return fields(a) === fields(b);
}

/**
 * Opens the call a painted row was clicked on before the app ran, and the ones clicked from now
 * until React's first commit replaces those rows.
 */
export function adoptFirstRows(select: (id: number) => void, win: Pick<Window, '__webhookLabFirstRows'> = window): void {
  const rows = win.__webhookLabFirstRows;
  if (!rows) return;
  delete win.__webhookLabFirstRows;
  if (rows.picked !== null) select(rows.picked);
  rows.pick = select;
}
