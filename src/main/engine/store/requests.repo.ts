import type { CallType, Json, NormalizedCall, RequestMeta } from '../../../shared/types';
import { normalizeCall, requestItems } from '../../../shared/normalize';
import { stringifyJson } from '../../../shared/nesting';
import type { Db } from './database';

/** What a request row keeps besides its body: the call's position is on the call row. */
export type RequestInfo = Omit<RequestMeta, 'batchIndex'>;

/**
 * One row per HTTP request the collector accepted, holding its body once: a batch's items are read
 * back from it (`batch[i]`) instead of each call row carrying its own copy. That keeps a stored call
 * small (the collector's batch throughput is bound by bytes written) and "the call as received" is
 * the request as received.
 */
export class RequestsRepo {
  private readonly insertStmt;
  private readonly bodyStmt;
  // Reading the calls of one batch in a row (export, the inspector stepping through a batch) parses
  // its body once.
  private cached: { id: number; parsed: unknown } | null = null;

  constructor(private readonly db: Db) {
    this.insertStmt = db.prepare('INSERT INTO requests (received_at, meta, body) VALUES (?, ?, ?)');
    this.bodyStmt = db.prepare('SELECT body FROM requests WHERE id = ?').pluck();
  }

  insert(receivedAt: number, info: RequestInfo, body: string): number {
    const id = Number(this.insertStmt.run(receivedAt, JSON.stringify(info), body).lastInsertRowid);
    // Ids are reused once the newest rows are gone (clearCalls, retention): the parse kept for a
    // deleted request must not be read as this one's body.
    if (this.cached?.id === id) this.cached = null;
    return id;
  }

  /** A call's item as received: the whole body for a single call, else the body's `batch[index]`. */
  item(requestId: number, batchIndex: number | null): Json {
    const parsed = this.parsed(requestId);
    if (batchIndex === null) return parsed as Json;
    const batch = (parsed as { batch?: unknown } | null)?.batch;
    return (Array.isArray(batch) ? (batch[batchIndex] ?? null) : null) as Json;
  }

  /**
   * A collector call's normalized form, rebuilt from its stored request exactly as the collector built
   * it on arrival (same items, envelope, arrival time and messageId, and the rules of the version it
   * was stamped with), instead of being stored twice. The caller checks that this build knows the version.
   */
  normalized(requestId: number, batchIndex: number | null, type: string, receivedAt: number, messageId: string | null, version: number): NormalizedCall | null {
    const body = this.parsed(requestId);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
    const { items, envelope } = requestItems(body as Record<string, unknown>, batchIndex === null ? (type as CallType) : 'batch');
    if (!Array.isArray(items)) return null;
    const item = items[batchIndex ?? 0];
    const r = normalizeCall(item, { envelope, receivedAt, newId: () => messageId ?? '', version });
    return r.ok ? r.call : null;
  }

  /**
   * Erases items from stored bodies (a purge must not leave a user's calls inside the batch they
   * arrived in). A batch item becomes null, keeping every other item's index. A request left with no
   * call (a single call, or a batch whose every item is gone) is deleted, envelope and all; a batch
   * that still holds others' calls keeps its envelope, which they share.
   */
  redact(items: { requestId: number; batchIndex: number | null }[]): void {
    const byRequest = new Map<number, number[]>();
    for (const { requestId, batchIndex } of items) {
      const list = byRequest.get(requestId) ?? [];
      if (batchIndex !== null) list.push(batchIndex);
      byRequest.set(requestId, list);
    }
    const update = this.db.prepare('UPDATE requests SET body = ? WHERE id = ?');
    const remove = this.db.prepare('DELETE FROM requests WHERE id = ?');
    for (const [id, indexes] of byRequest) {
      const body = this.parsed(id) as { batch?: unknown[] } | null;
      if (indexes.length === 0 || !Array.isArray(body?.batch)) {
        remove.run(id);
      } else {
        const batch = [...body.batch];
        for (const i of indexes) batch[i] = null;
        if (batch.every((item) => item === null)) remove.run(id);
        // The calls left may nest deeper than JSON.stringify survives (stored as dropped).
        else update.run(stringifyJson({ ...body, batch }), id);
      }
      if (this.cached?.id === id) this.cached = null;
    }
  }

  private parsed(id: number): unknown {
    if (this.cached?.id === id) return this.cached.parsed;
    const body = this.bodyStmt.get(id) as string | undefined;
    let parsed: unknown = null;
    if (body !== undefined) {
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = body;
      }
    }
    this.cached = { id, parsed };
    return parsed;
  }
}
