import type { DeliveryState } from '../../../shared/types';
import type { Db } from './database';

/**
 * Where the deliveries of chosen calls stand: the deletion notices a request sent, and the calls of
 * a load run (marked by a messageId prefix, stored from a known call id on).
 */
export class DeliveryOutcomes {
  private readonly nextId;
  private readonly ofIds;
  private readonly fromId;
  private readonly deliveredFromId;

  constructor(db: Db) {
    this.nextId = db.prepare('SELECT COALESCE(MAX(id), 0) + 1 AS n FROM calls').pluck();
    this.ofIds = db.prepare("SELECT call_id, state FROM deliveries WHERE call_id IN (SELECT value FROM json_each(?)) AND kind = 'classic'");
    // The prefix is matched with LIKE; its own % and _ are escaped so they match only themselves.
    this.fromId = db.prepare(
      "SELECT d.call_id AS id, d.state AS state FROM deliveries d JOIN calls c ON c.id = d.call_id WHERE d.call_id >= ? AND d.kind = 'classic' AND c.message_id LIKE ? ESCAPE '\\' ORDER BY d.call_id",
    );
    this.deliveredFromId = db.prepare(`SELECT d.delivered_at - c.received_at AS ms FROM deliveries d JOIN calls c ON c.id = d.call_id
      WHERE d.call_id >= ? AND d.kind = 'classic' AND d.delivered_at > ? AND d.delivered_at <= ? AND c.message_id LIKE ? ESCAPE '\\'`);
  }

  /** An id no stored call has yet; calls stored from now on get this id or a higher one. */
  nextCallId(): number {
    return this.nextId.get() as number;
  }

  /** The delivery state of each call that has a delivery (calls without one are missing from the map). */
  statesOf(callIds: number[]): Map<number, DeliveryState> {
    if (callIds.length === 0) return new Map();
    const rows = this.ofIds.all(JSON.stringify(callIds)) as { call_id: number; state: DeliveryState }[];
    return new Map(rows.map((r) => [r.call_id, r.state]));
  }

  /** Deliveries of calls with id >= fromCallId whose messageId starts with the prefix, by call id. */
  statesFrom(fromCallId: number, messageIdPrefix: string): { id: number; state: DeliveryState }[] {
    return this.fromId.all(fromCallId, likePrefix(messageIdPrefix)) as { id: number; state: DeliveryState }[];
  }

  /** Receipt-to-delivery times (ms) of those calls delivered in (after, until], unordered. */
  latenciesFrom(fromCallId: number, messageIdPrefix: string, after: number, until: number): number[] {
    return (this.deliveredFromId.all(fromCallId, after, until, likePrefix(messageIdPrefix)) as { ms: number }[]).map((r) => r.ms);
  }
}

function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
