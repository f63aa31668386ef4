import type { CallSummary, UrlOutcome } from '../../shared/types';
import { deliveredWithFailures, inFlightSince, STATE_LABELS, urlOutcomeNote, urlOutcomeNoteShort } from '../../shared/url-outcome';
import { formatDuration } from './format';

// What a call's status chip says, without React: StatusChip renders it (its times ticking), and so
// does the shell painted before the app runs (first-page/first-page.ts, inlined by the build).

export type ChipCall = Pick<CallSummary, 'status' | 'dropReason' | 'deliveryState' | 'nextAttemptAt'> & { urls?: UrlOutcome[] };

export interface Chip {
  /** data-status: the delivery's state, 'dropped' or 'not_forwarded'. */
  status: string;
  className: string;
  label: string;
  /** The status word the label starts with ("dropped", "blocked", "delivered"…): never cut (chipWordStyle). */
  word: string;
  title?: string;
  /** In flight: when the oldest attempt still out started (epoch ms), shown as its elapsed time. */
  since: number | null;
  /** Retrying: when the next attempt is due, shown as a countdown. */
  retryAt: string | null;
  /** "1 of 5 URLs failed", when some but not all did. */
  note: string | null;
  /** The same for a narrow list (the detail open at 1024 px): "⚠1/5". */
  noteShort: string | null;
}

/**
 * The chip's least width: its status word and padding (1ch, a digit's width, is at least a letter's in
 * the UI fonts), so a narrow status column cuts what follows the word ("Actions ×2" beside it stays
 * whole), never the word itself.
 */
export function chipMinWidth(chip: Pick<Chip, 'word'>): string {
  return `calc(${chip.word.length}ch + 16px)`;
}

/** How an outcome is named in the URL states: its URL, or "Actions: <mapping>" for an Actions request. */
export function outcomeName(u: Pick<UrlOutcome, 'url' | 'via'>): string {
  return u.via ? `Actions: ${u.via.mapping}` : u.url;
}

/** One line per outcome for a tooltip: "Actions: orders — failed · HTTP 500". */
export function outcomeLine(u: UrlOutcome): string {
  const waiting = u.via?.waiting ? ` (waiting for its batch: ${u.via.waiting.queued} of ${u.via.waiting.of} queued)` : '';
  const status = u.lastStatus !== null && u.state !== 'in_flight' ? ` · HTTP ${u.lastStatus}` : '';
  return `${outcomeName(u)} — ${STATE_LABELS[u.state]}${status}${waiting}`;
}

// The list's short word for every reason; the call's detail names which (its forwarding, shared/forwarding.ts).
export const NOT_FORWARDED_TITLE = "Not forwarded: its source's Webhooks is off, its integrations turned Webhooks off, or no Actions mapping matched it (open the call for which)";

export function chipOf(call: ChipCall): Chip {
  if (call.status === 'dropped') {
    const reason = call.dropReason ?? undefined;
    return { status: 'dropped', className: 'chip chip-dropped', label: reason ? `dropped: ${reason}` : 'dropped', word: 'dropped', title: reason, since: null, retryAt: null, note: null, noteShort: null };
  }
  if (call.status === 'blocked') {
    // Blocked by the source's tracking plan: the plan working, not bad input (docs/tracking-plans.md).
    // The reason is a sentence: a narrow list cut it mid-word ("blocked by tra…"), so the chip says
    // what happened and the tooltip (and the call's detail, its violations) why.
    const reason = call.dropReason ?? 'blocked by tracking plan';
    return { status: 'blocked', className: 'chip chip-blocked', label: 'blocked by plan', word: 'blocked by plan', title: reason, since: null, retryAt: null, note: null, noteShort: null };
  }
  const state = call.deliveryState;
  if (!state) return { status: 'not_forwarded', className: 'chip chip-none', label: 'not forwarded', word: 'not forwarded', title: NOT_FORWARDED_TITLE, since: null, retryAt: null, note: null, noteShort: null };
  const urls = call.urls ?? [];
  const warn = deliveredWithFailures({ deliveryState: state, urls });
  return {
    status: state,
    className: `chip chip-${state}${warn ? ' chip-warn' : ''}`,
    label: STATE_LABELS[state],
    word: STATE_LABELS[state],
    // Each URL's part, Actions requests named by their mapping, when there is more than one to tell apart.
    title: urls.length > 1 || urls.some((u) => u.via) ? urls.map(outcomeLine).join('\n') : undefined,
    since: state === 'in_flight' ? inFlightSince(urls) : null,
    retryAt: state === 'retrying' ? call.nextAttemptAt : null,
    note: urlOutcomeNote(urls),
    noteShort: urlOutcomeNoteShort(urls),
  };
}

export interface ActionsTag {
  /** What the row shows: "Actions ×2"; in a narrow list (the detail open at 1024 px) `short`, "A×2". */
  label: string;
  short: string;
  /** The worst state among the Actions parts (data-state, and the tag's colour). */
  state: string;
  /** Each Actions part, one a line, for the tooltip. */
  title: string;
  /** The same in one sentence, for a screen reader (the label alone says too little). */
  spoken: string;
}

// The order a part's state weighs in the tag's colour: a failure shows before a retry, and so on.
const TAG_WEIGHT: readonly string[] = ['expired', 'failed', 'retrying', 'in_flight', 'pending', 'canceled', 'not_attempted', 'delivered'];

/**
 * The call list's sign that a call also went (or is going) through Webhooks (Actions): how many
 * Actions requests carry it, coloured by the worst of them; null when none does.
 */
export function actionsTagOf(urls: readonly UrlOutcome[] | undefined): ActionsTag | null {
  const parts = (urls ?? []).filter((u) => u.via);
  if (parts.length === 0) return null;
  const state = TAG_WEIGHT.find((s) => parts.some((u) => u.state === s)) ?? parts[0].state;
  const lines = parts.map(outcomeLine);
  return {
    label: `Actions ×${parts.length}`,
    short: `A×${parts.length}`,
    state,
    title: `Through Webhooks (Actions):\n${lines.join('\n')}`,
    spoken: `, through Webhooks (Actions): ${lines.join('; ')}`,
  };
}

/** The countdown after a chip or a next-retry time: " in 4m 59s", " now" once due. */
export function countdownText(at: string, now: number): string {
  const left = new Date(at).getTime() - now;
  return left > 0 ? ` in ${formatDuration(left)}` : ' now';
}

/** How long something has been out: " 3s". */
export function elapsedText(since: number, now: number): string {
  return ` ${formatDuration(Math.max(0, now - since))}`;
}

/** The URL note after the label: " · 1 of 5 URLs failed". */
export const noteText = (note: string): string => ` · ${note}`;
