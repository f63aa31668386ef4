import type { CallDetail, CallSummary, DeliveryState } from '../../shared/types';
import { combinedState } from '../../shared/url-outcome';

// Re-opening a JSON Lines export (GET /api/export?format=jsonl, docs/simulation-load-export.md): each
// line is what getMessage answered for one call. Read here, in the renderer, as a read-only view of
// the file; nothing goes to the engine (README, Decisions: an export opens read-only, up to a size).

/** Larger files are refused before they are read (README, Decisions). */
export const MAX_EXPORT_BYTES = 50 * 1024 * 1024;
/** More lines than this are refused: the view keeps every call's detail in memory. */
export const MAX_EXPORT_LINES = 100_000;
/** Problems listed one by one; the rest are counted. */
export const MAX_LISTED_PROBLEMS = 50;

export interface ExportLineProblem {
  /** 1-based, as an editor counts. */
  line: number;
  message: string;
}

export interface ParsedExport {
  /** In the file's order (an export is oldest first). */
  calls: CallDetail[];
  problems: ExportLineProblem[];
  /** Problems past MAX_LISTED_PROBLEMS, counted only. */
  moreProblems: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why a parsed line is not a call detail (the first field that is missing or of the wrong type), or null when it is one. */
export function notACallDetail(v: unknown): string | null {
  if (!isObject(v)) return `a JSON ${Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v}, not a call's detail object`;
  const call = v.call;
  if (!isObject(call)) return 'no "call" object';
  if (typeof call.id !== 'number' || !Number.isInteger(call.id)) return '"call.id" is not a whole number';
  for (const key of ['type', 'receivedAt', 'status'] as const) if (typeof call[key] !== 'string') return `"call.${key}" is not a string`;
  if (!isObject(call.request)) return 'no "call.request" object';
  if (!Array.isArray(v.urls)) return '"urls" is not an array';
  if (!Array.isArray(v.deliveries)) return '"deliveries" is not an array';
  for (const [i, d] of v.deliveries.entries()) {
    if (!isObject(d) || typeof d.id !== 'number') return `"deliveries[${i}]" is not a delivery`;
    if (!Array.isArray(d.attempts)) return `"deliveries[${i}].attempts" is not an array`;
    if (!Array.isArray(d.urls)) return `"deliveries[${i}].urls" is not an array`;
    if (typeof d.body !== 'string') return `"deliveries[${i}].body" is not a string`;
  }
  return null;
}

/**
 * Reads an export line by line: a line that is not JSON, or not a call's detail, is reported with its
 * number and left out; the others are kept. Blank lines (the final newline, CRLF endings) are skipped.
 * A call whose id came earlier in the file is reported and left out (the list is keyed by id).
 */
export function parseExport(text: string): ParsedExport {
  const calls: CallDetail[] = [];
  const problems: ExportLineProblem[] = [];
  let moreProblems = 0;
  const lineOf = new Map<number, number>();
  const problem = (line: number, message: string) => {
    if (problems.length < MAX_LISTED_PROBLEMS) problems.push({ line, message });
    else moreProblems++;
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
    if (raw.trim() === '') continue;
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      problem(line, `not JSON: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    const why = notACallDetail(value);
    if (why) {
      problem(line, `not a call's detail: ${why}`);
      continue;
    }
    const detail = value as CallDetail;
    const earlier = lineOf.get(detail.call.id);
    if (earlier !== undefined) {
      problem(line, `call #${detail.call.id} is already on line ${earlier}`);
      continue;
    }
    lineOf.set(detail.call.id, line);
    // Exports made before a field existed lack it: the detail view reads these as "not checked", "no reason".
    calls.push({ ...detail, violations: detail.violations ?? null, planCheck: detail.planCheck ?? null });
  }
  return { calls, problems, moreProblems };
}

/** How many lines the text has (up to the first `stop` + 1), without splitting it: the size check before parsing. */
export function countLines(text: string, stop = MAX_EXPORT_LINES): number {
  let n = text.length > 0 && !text.endsWith('\n') ? 1 : 0;
  for (let i = text.indexOf('\n'); i !== -1 && n <= stop; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Why a file of this size is not opened, or null. */
export function tooLarge(name: string, bytes: number): string | null {
  if (bytes <= MAX_EXPORT_BYTES) return null;
  return `${name} is ${(bytes / 1024 / 1024).toFixed(1)} MB: the lab opens exports of up to 50 MB. Export fewer calls (filter the inspector first, or pass limit to GET /api/export).`;
}

/** Why text with this many lines is not opened, or null. */
export function tooManyLines(name: string, lines: number): string | null {
  if (lines <= MAX_EXPORT_LINES) return null;
  return `${name} has more than ${MAX_EXPORT_LINES.toLocaleString('en-US')} lines: the lab opens exports of up to ${MAX_EXPORT_LINES.toLocaleString('en-US')} calls. Export fewer calls (filter the inspector first, or pass limit to GET /api/export).`;
}

/**
 * A list row for an exported call, from its detail: the detail carries the summary's per-URL outcomes
 * (`urls`) and every delivery, so the row reads as it did in the lab when the export was made.
 */
export function summaryOfDetail(detail: CallDetail): CallSummary {
  const { call, deliveries } = detail;
  const classic = deliveries.find((d) => d.kind !== 'actions') ?? null;
  const actions = classic ? [] : deliveries.filter((d) => d.kind === 'actions');
  let state: DeliveryState | null = classic?.state ?? null;
  if (!classic && actions.length && call.status === 'accepted') {
    state = combinedState(actions);
  }
  const counted = classic ? [classic] : actions;
  const last = counted.flatMap((d) => d.attempts).at(-1);
  const normalized = (call.normalized ?? {}) as { groupId?: unknown; previousId?: unknown };
  return {
    id: call.id,
    receivedAt: call.receivedAt,
    sourceId: call.sourceId,
    sourceName: call.sourceName,
    type: call.type,
    userId: call.userId,
    anonymousId: call.anonymousId,
    label: call.label,
    messageId: call.messageId,
    groupId: typeof normalized.groupId === 'string' ? normalized.groupId : null,
    previousId: typeof normalized.previousId === 'string' ? normalized.previousId : null,
    status: call.status,
    dropReason: call.dropReason,
    deliveryState: call.status === 'dropped' ? 'dropped' : state,
    deliveryId: counted[0]?.id ?? null,
    attemptCount: counted.reduce((n, d) => n + d.attemptCount, 0),
    nextAttemptAt: state === 'retrying' ? (counted.map((d) => d.nextAttemptAt).filter((t): t is string => t !== null).sort()[0] ?? null) : null,
    latencyMs: last?.durationMs ?? null,
    urls: detail.urls,
    violations: detail.violations === null || detail.violations === undefined ? null : detail.violations.length,
  };
}
