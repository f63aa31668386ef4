import type { FeatureDb } from '../store/feature-db';
import { statementCache } from '../store/statement-cache';
import { RULE_TYPES, type PlanVerdict, type TrackingPlanConnection, type TrackingPlanRule, type Violation } from '../../../shared/tracking-plan.schema';


// The tables of migration 13: tracking_plans, tracking_plan_connections, call_violations. A feature
// repository (Store.featureRepo): the store owns the calls; this owns what checking them found.

export interface StoredPlan {
  id: string;
  name: string;
  rules: TrackingPlanRule[];
  createdAt: number;
  updatedAt: number;
  /** Why the stored rules could not be read (a row edited by hand, or damaged): loaded with none. */
  damaged?: string;
}

export interface StoredConnection extends Omit<TrackingPlanConnection, 'name'> {
  sourceId: string;
  planId: string;
}

export interface CallViolationsRow {
  planId: string;
  violations: Violation[];
  blocked: string | null;
  omitted: string[];
}

export interface ViolationSummaryRow {
  sourceId: string;
  type: string;
  event: string | null;
  kind: string;
  /** Calls with at least one violation of this kind. */
  count: number;
  /** Violations of this kind in those calls (a call can have several: one per property). */
  violations: number;
  lastSeen: number;
  exampleCallId: number;
}

interface PlanRow {
  id: string;
  name: string;
  rules: string;
  created_at: number;
  updated_at: number;
}

/**
 * A row's rules as the lab wrote them, or why they are not: the shape every reader relies on (an array
 * of objects with a known type, a JSON Schema object, a whole version, a key or none), checked in
 * microseconds. What a rule's schema says is left to its compile.
 */
function readRules(text: string): TrackingPlanRule[] | string {
  let rules: unknown;
  try {
    rules = JSON.parse(text);
  } catch (err) {
    return `its stored rules are not JSON (${(err as Error).message})`;
  }
  if (!Array.isArray(rules)) return 'its stored rules are not a list';
  const bad = rules.findIndex((r) => !isRuleShaped(r));
  if (bad !== -1) return `its stored rule ${bad} is not a rule`;
  return rules as TrackingPlanRule[];
}

function isRuleShaped(r: unknown): boolean {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return false;
  const { type, jsonSchema, version, key } = r as Record<string, unknown>;
  return (
    (RULE_TYPES as readonly unknown[]).includes(type) &&
    typeof jsonSchema === 'object' &&
    jsonSchema !== null &&
    !Array.isArray(jsonSchema) &&
    Number.isInteger(version) &&
    (key === undefined || key === null || typeof key === 'string')
  );
}

export class TrackingPlansRepo {
  private readonly stmt;

  constructor(private readonly db: FeatureDb) {
    this.stmt = statementCache(db);
  }

  plans(): StoredPlan[] {
    return (this.stmt('SELECT * FROM tracking_plans ORDER BY name').all() as PlanRow[]).map((r) => {
      const read = readRules(r.rules);
      return { id: r.id, name: r.name, createdAt: r.created_at, updatedAt: r.updated_at, ...(typeof read === 'string' ? { rules: [], damaged: read } : { rules: read }) };
    });
  }

  savePlan(p: StoredPlan): void {
    this.stmt(
      `INSERT INTO tracking_plans (id, name, rules, created_at, updated_at) VALUES (@id, @name, @rules, @createdAt, @updatedAt)
       ON CONFLICT(id) DO UPDATE SET name = excluded.name, rules = excluded.rules, updated_at = excluded.updated_at`,
    ).run({ id: p.id, name: p.name, rules: JSON.stringify(p.rules), createdAt: p.createdAt, updatedAt: p.updatedAt });
  }

  deletePlan(id: string): void {
    this.stmt('DELETE FROM tracking_plan_connections WHERE plan_id = ?').run(id);
    this.stmt('DELETE FROM tracking_plans WHERE id = ?').run(id);
  }

  connections(): StoredConnection[] {
    const rows = this.stmt('SELECT * FROM tracking_plan_connections').all() as {
      source_id: string;
      plan_id: string;
      unplanned_events: 'allow' | 'block';
      unplanned_properties: 'allow' | 'omit';
      violations: 'allow' | 'block';
    }[];
    return rows.map((r) => ({ sourceId: r.source_id, planId: r.plan_id, unplannedEvents: r.unplanned_events, unplannedProperties: r.unplanned_properties, violations: r.violations }));
  }

  connect(c: StoredConnection): void {
    this.stmt(
      `INSERT INTO tracking_plan_connections (source_id, plan_id, unplanned_events, unplanned_properties, violations) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(source_id) DO UPDATE SET plan_id = excluded.plan_id, unplanned_events = excluded.unplanned_events,
         unplanned_properties = excluded.unplanned_properties, violations = excluded.violations`,
    ).run(c.sourceId, c.planId, c.unplannedEvents, c.unplannedProperties, c.violations);
  }

  disconnect(sourceId: string): void {
    this.stmt('DELETE FROM tracking_plan_connections WHERE source_id = ?').run(sourceId);
  }

  /** Written inside the collector's write job, with the call (durable before its 2xx). */
  recordVerdict(callId: number, sourceId: string, receivedAt: number, type: string, label: string | null, v: PlanVerdict): void {
    this.stmt(
      `INSERT OR REPLACE INTO call_violations (call_id, source_id, plan_id, received_at, type, label, count, blocked, violations, omitted)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(callId, sourceId, v.planId, receivedAt, type, label, v.violations.length, v.blocked, JSON.stringify(v.violations), v.omitted.length ? JSON.stringify(v.omitted) : null);
  }

  /** One row per request whose calls were checked (checked: how many), in request order: only for the newest request (arrivals.ts). */
  recordChecked(requestId: number, sourceId: string, planId: string, receivedAt: number, checked: number, rules: string): void {
    // Rows are written in request order (inside the collector's write job): seen_by is the latest time so far.
    this.stmt(
      `INSERT OR REPLACE INTO checked_requests (request_id, source_id, plan_id, received_at, checked, rules, seen_by)
       VALUES (?, ?, ?, ?, ?, ?, MAX(?, COALESCE((SELECT seen_by FROM checked_requests ORDER BY request_id DESC LIMIT 1), 0)))`,
    ).run(requestId, sourceId, planId, receivedAt, checked, rules, receivedAt);
  }

  /** Calls each rule of a plan checked since a time (rule id → count). */
  matchedByRule(planId: string, since: number): Map<string, number> {
    const rows = this.stmt(
      `SELECT j.key AS rule_id, SUM(j.value) AS n FROM checked_requests q, json_each(q.rules) j
        WHERE q.request_id >= ? AND q.plan_id = ? AND q.received_at >= ? AND q.rules IS NOT NULL GROUP BY j.key`,
    ).all(this.firstCheckedSince(since), planId, since) as { rule_id: string; n: number }[];
    return new Map(rows.map((r) => [r.rule_id, r.n]));
  }

  /**
   * A request id no checked request received since `since` is below. checked_requests has no index on
   * its time: with one, every commit of a source with a plan wrote that index's page beside the
   * table's, and those pages were most of what the plan cost the collector (issue 38: the bench's
   * planned batches read 0.86–0.88× the plain ones with it, 0.90× without). A request's time is when
   * it arrived, and one may be stored after later ones (it waited: a collector fault's delay, its
   * check, a laptop asleep) or under a clock set back; so each row also keeps `seen_by`, the latest
   * time of the rows up to it (recordChecked), which grows with the id and is never below the row's
   * own time. The first row whose `seen_by` reaches `since` is found by a binary search over the ids;
   * no row received since then is before it.
   */
  private firstCheckedSince(since: number): number {
    const first = this.stmt('SELECT request_id, seen_by FROM checked_requests WHERE request_id >= ? ORDER BY request_id LIMIT 1');
    let lo = 0;
    let hi = ((this.stmt('SELECT MAX(request_id) FROM checked_requests').pluck().get() as number | null) ?? -1) + 1;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const row = first.get(mid) as { request_id: number; seen_by: number } | undefined;
      if (row === undefined || row.seen_by >= since) hi = mid;
      else lo = row.request_id + 1;
    }
    return lo;
  }

  /** Calls with at least one violation of each rule of a plan since a time (rule id → count). */
  failedByRule(planId: string, since: number): Map<string, number> {
    const rows = this.stmt(
      `SELECT json_extract(j.value, '$.rule.type') || char(31) || COALESCE(json_extract(j.value, '$.rule.key'), '') || char(31) || json_extract(j.value, '$.rule.version') AS rule_id,
              COUNT(DISTINCT v.call_id) AS n
         FROM call_violations v, json_each(v.violations) j
        WHERE v.plan_id = ? AND v.received_at >= ? AND json_extract(j.value, '$.rule') IS NOT NULL GROUP BY rule_id`,
    ).all(planId, since) as { rule_id: string; n: number }[];
    // (json_each has an "id" column of its own: the alias must not be "id", or GROUP BY takes that.)
    return new Map(rows.map((r) => [r.rule_id, r.n]));
  }

  /** Calls a plan's enforcement blocked since a time. */
  blockedSince(planId: string, since: number): number {
    return this.stmt('SELECT COUNT(*) FROM call_violations WHERE plan_id = ? AND received_at >= ? AND blocked IS NOT NULL').pluck().get(planId, since) as number;
  }

  /** The commonest `limit` events a plan does not plan, seen since a time, with their calls, and how many such events there were. */
  unplannedEventsSince(planId: string, since: number, limit: number): { events: { event: string; calls: number }[]; distinct: number } {
    // COUNT(*) OVER () counts the groups in the same pass: a lab sending thousands of distinct names
    // reads back only the first `limit` of them.
    const rows = this.stmt(
      `SELECT event, calls, COUNT(*) OVER () AS distinct_events FROM (
         SELECT json_extract(j.value, '$.value') AS event, COUNT(DISTINCT v.call_id) AS calls
           FROM call_violations v, json_each(v.violations) j
          WHERE v.plan_id = ? AND v.received_at >= ? AND json_extract(j.value, '$.kind') = 'unplanned_event'
          GROUP BY event)
        ORDER BY calls DESC, event LIMIT ?`,
    ).all(planId, since, limit) as { event: string; calls: number; distinct_events: number }[];
    return { events: rows.map(({ event, calls }) => ({ event, calls })), distinct: rows[0]?.distinct_events ?? 0 };
  }

  /** The plan a request's calls were checked against; undefined when they were not. */
  checkedPlanOf(requestId: number): string | undefined {
    return this.stmt('SELECT plan_id FROM checked_requests WHERE request_id = ?').pluck().get(requestId) as string | undefined;
  }

  /** What checking this call found when it arrived, when it found something (a clean call has no row). */
  ofCall(callId: number): CallViolationsRow | undefined {
    const r = this.stmt('SELECT plan_id, blocked, violations, omitted FROM call_violations WHERE call_id = ?').get(callId) as
      | { plan_id: string; blocked: string | null; violations: string; omitted: string | null }
      | undefined;
    return r && { planId: r.plan_id, blocked: r.blocked, violations: JSON.parse(r.violations) as Violation[], omitted: r.omitted ? (JSON.parse(r.omitted) as string[]) : [] };
  }

  /** Violation counts of many calls (list pages): call id → count; absent = not checked. */
  countsOf(callIds: number[]): Map<number, number> {
    const out = new Map<number, number>();
    if (callIds.length === 0) return out;
    const rows = this.stmt('SELECT call_id, count FROM call_violations WHERE call_id IN (SELECT value FROM json_each(?))').all(JSON.stringify(callIds)) as { call_id: number; count: number }[];
    for (const r of rows) out.set(r.call_id, r.count);
    return out;
  }

  /**
   * Violations per source, call type, event and kind since a time: calls, violations, last seen, one
   * example call (the newest); the `limit` most frequent, and how many there are in all.
   */
  summary(since: number, sourceId: string | undefined, limit: number): { rows: ViolationSummaryRow[]; total: number } {
    const rows = this.stmt(
      `SELECT v.source_id AS sourceId, v.type AS type, v.label AS event, json_extract(j.value, '$.kind') AS kind,
              COUNT(DISTINCT v.call_id) AS count, COUNT(*) AS violations, MAX(v.received_at) AS lastSeen, MAX(v.call_id) AS exampleCallId,
              COUNT(*) OVER () AS total
         FROM call_violations v, json_each(v.violations) j
        WHERE v.count > 0 AND v.received_at >= ? AND (? IS NULL OR v.source_id = ?)
        GROUP BY v.source_id, v.type, v.label, kind
        ORDER BY count DESC, lastSeen DESC
        LIMIT ?`,
    ).all(since, sourceId ?? null, sourceId ?? null, limit) as (ViolationSummaryRow & { total: number })[];
    return { rows: rows.map(({ total: _, ...r }) => r), total: rows[0]?.total ?? 0 };
  }

  /** Checked calls since a time: how many, with violations, blocked (for getViolations' totals). */
  totals(since: number, sourceId: string | undefined): { checked: number; withViolations: number; blocked: number } {
    const found = this.stmt(
      `SELECT COALESCE(SUM(count > 0), 0) AS withViolations, COALESCE(SUM(blocked IS NOT NULL), 0) AS blocked
         FROM call_violations WHERE received_at >= ? AND (? IS NULL OR source_id = ?)`,
    ).get(since, sourceId ?? null, sourceId ?? null) as { withViolations: number; blocked: number };
    const checked = this.stmt('SELECT COALESCE(SUM(checked), 0) FROM checked_requests WHERE request_id >= ? AND received_at >= ? AND (? IS NULL OR source_id = ?)')
      .pluck()
      .get(this.firstCheckedSince(since), since, sourceId ?? null, sourceId ?? null) as number;
    return { checked, ...found };
  }
}
