import { bodyMatches, bodySearchText } from '../../../shared/search-filter';
import type { Db } from './database';
import type { RequestsRepo } from './requests.repo';
import { backgroundSlices } from '../slice-meter';

/** Terms shorter than this (in characters, as code points) are not looked up in the index: a trigram needs three. */
export const INDEXED_TERM_MIN = 3;

/** One slice: FTS5's merges, then calls added, until this much time has gone, in one transaction. */
const SLICE_MS = 12;
/**
 * A slice merges first, for up to this long while there is merging to do: FTS5's own merges
 * (automerge, off since migration 26) ran inside a slice's insert, unbounded (a slice of 15 ms of
 * inserts took 35 ms at p99 and up to 90 ms; a crisis merge at 16 segments was worse). Merging
 * first gives indexing what merging left, so new segments never outrun the merges.
 */
const MERGE_MS = 8;
/** FTS5 leaf pages (about 4 KB each) written by one 'merge' step: a step takes 1–3 ms. */
const MERGE_PAGES = 32;
/** While calls arrive, one slice per this gap: about 5 % of the engine's time, FTS5's merges included (300 ms took 10 %). */
const BUSY_GAP_MS = 600;
/**
 * More calls than this between two ticks (BUSY_GAP_MS apart: over 1,000 a second) is a flood: no slice
 * runs until it ends. A slice then indexes fewer calls than arrive anyway, and its 5 % (more with
 * batches: each slice parses their bodies again) is taken from the collector when it is busiest.
 */
const FLOOD_CALLS = 600;
/** Once no call has arrived for QUIET_MS, the next slice follows after this gap: caught up on idle. */
const IDLE_GAP_MS = 2;
const QUIET_MS = 250;

/**
 * Whether the indexer runs a slice now, and when it looks again, from the calls stored since it last
 * looked and how long ago the newest arrived.
 */
export function slicePace(arrived: number, quietMs: number): { slice: boolean; gapMs: number } {
  if (quietMs >= QUIET_MS) return { slice: true, gapMs: IDLE_GAP_MS };
  return { slice: arrived <= FLOOD_CALLS, gapMs: BUSY_GAP_MS };
}
/** A search whose fields match more calls than this lists every match instead of looking each up in the index. */
const FIELD_CHECK_MAX = 1000;
/** Nothing to index: looked at again after this long. */
const WAIT_MS = 250;

/**
 * "Search bodies" at field-search speed (issue 27): a trigram index of every call's body text
 * (bodySearchText in src/shared/search-filter.ts: its keys and string values, folded), so a term is
 * looked up instead of every body being read and parsed.
 *
 * - The index is an FTS5 table with the trigram tokenizer over the already folded text (case_sensitive:
 *   the folding is JavaScript's, the rule's own), contentless (the bodies are stored once, in requests)
 *   with contentless_delete, so a call's entry can be removed. A phrase query on it is a substring
 *   test, exact for a term of three characters or more without a line break (the separator) or
 *   U+FFFD–U+FFFF (FTS5 reads the three as one: see indexable).
 * - It is fed off the hot path: the collector only stores calls; this class indexes them afterwards,
 *   oldest first, in slices of SLICE_MS each in a transaction of its own, one slice per BUSY_GAP_MS
 *   while calls arrive, none during a flood (over FLOOD_CALLS a gap), and back to back once they
 *   stop. `indexed_to` (body_index_state) is the newest call indexed, written in the slice's
 *   transaction, so a restart goes on where it stopped.
 * - The calls above it (the tail) are searched by reading their bodies, as every call was before, so
 *   a call is found from the moment it is stored. Terms the index cannot answer (under three
 *   characters, or holding a line break or U+FFFD–U+FFFF) read every body: exact, as slow as before.
 * - A call removed (retention, clear, erasure) takes its entry with it (CallsRepo.remove → forget),
 *   and the mark comes down to the newest call left, so an id SQLite gives again is indexed again.
 */
export class BodyIndex {
  private readonly pendingStmt;
  private readonly insertStmt;
  private readonly deleteStmt;
  private readonly markStmt;
  private readonly readMarkStmt;
  private readonly newestStmt;
  private readonly matchStmt;
  private readonly countStmt;
  private readonly pageStmt;
  private readonly holdsStmt;
  private readonly mergeStmt;
  private readonly totalChangesStmt;
  private indexedTo: number;
  /**
   * The last slice stopped merging for time, not because nothing was left to merge; true at a start
   * (a lab stopped mid-merge) and after removals (their tombstones are merged away), so the background
   * looks once: a merge step with nothing to do costs microseconds.
   */
  private mergeBehind = true;
  private timer: NodeJS.Timeout | null = null;
  private paused = false;
  private stopped = true;
  private lastNewest = -1;
  private lastArrival = 0;

  constructor(
    private readonly db: Db,
    private readonly requests: RequestsRepo,
  ) {
    this.pendingStmt = db.prepare('SELECT id, request_id, batch_index FROM calls WHERE id > ? ORDER BY id LIMIT ?').raw();
    this.insertStmt = db.prepare('INSERT INTO body_index (rowid, text) VALUES (?, ?)');
    // One statement per id: `rowid IN (json_each)` makes FTS5 read the whole index (5,000 ids: 690 ms against 42 ms).
    this.deleteStmt = db.prepare('DELETE FROM body_index WHERE rowid = CAST(? AS INTEGER)');
    this.markStmt = db.prepare('UPDATE body_index_state SET indexed_to = ?');
    this.readMarkStmt = db.prepare('SELECT indexed_to FROM body_index_state').pluck();
    this.newestStmt = db.prepare('SELECT MAX(id) FROM calls').pluck();
    this.matchStmt = db.prepare('SELECT rowid FROM body_index WHERE body_index MATCH ? ORDER BY rowid DESC').pluck();
    // Counting is several times cheaper than listing a common term's 180,000 rowids into JavaScript.
    this.countStmt = db.prepare('SELECT COUNT(*) FROM body_index WHERE body_index MATCH ?').pluck();
    this.pageStmt = db.prepare('SELECT rowid FROM body_index WHERE body_index MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?').pluck();
    // CAST: FTS5 ignores `rowid = ?` on this contentless table when the id is bound as a JavaScript
    // number (a REAL), and then answered 1 for every id: body=1 dropped calls only their fields match (issue 37).
    this.holdsStmt = db.prepare('SELECT 1 FROM body_index WHERE body_index MATCH ? AND rowid = CAST(? AS INTEGER)').pluck();
    this.mergeStmt = db.prepare("INSERT INTO body_index (body_index, rank) VALUES ('merge', ?)");
    this.totalChangesStmt = db.prepare('SELECT total_changes()').pluck();
    this.indexedTo = this.readMark();
    // Defensive: the mark never stands above the newest call (ids above it are given again).
    this.lower();
  }

  /** Whether a slice of FTS5's merges alone is still to run (tests: the background has caught up on them). */
  get mergesPending(): boolean {
    return this.mergeBehind;
  }

  /** The newest call whose body is in the index: calls above it are read when searched. */
  get watermark(): number {
    return this.indexedTo;
  }

  /** How many stored calls are not indexed yet. */
  behind(): number {
    return this.db.prepare('SELECT COUNT(*) FROM calls WHERE id > ?').pluck().get(this.indexedTo) as number;
  }

  /**
   * One slice, in one transaction: FTS5's merges while they have work, for up to `mergeMs`, then
   * calls above the mark indexed, oldest first (16 at least), until `budgetMs` has gone or
   * `maxCalls` were added; returns how many calls.
   */
  step(budgetMs = SLICE_MS, maxCalls = 4000, mergeMs = MERGE_MS): number {
    const t0 = performance.now();
    let last = this.indexedTo;
    let n = 0;
    this.db.transaction(() => {
      this.mergeBehind = !this.merge(t0 + mergeMs);
      const rows = this.pendingStmt.all(this.indexedTo, maxCalls) as [number, number, number | null][];
      for (const [id, requestId, batchIndex] of rows) {
        this.insertStmt.run(id, textOf(this.requests, requestId, batchIndex));
        last = id;
        n++;
        if ((n & 15) === 0 && performance.now() - t0 > budgetMs) break;
      }
      if (n > 0) this.markStmt.run(last);
    })();
    // Only once committed: a slice rolled back leaves the mark where it was.
    this.indexedTo = last;
    return n;
  }

  /**
   * FTS5's incremental merges ('merge' with a positive count: only levels holding enough segments)
   * until none is left or `until` has passed; true when none is left. A step that merged nothing
   * changed no row but its own (total_changes counts the rows FTS5 writes).
   */
  private merge(until: number): boolean {
    while (performance.now() < until) {
      const before = this.totalChangesStmt.get() as number;
      this.mergeStmt.run(MERGE_PAGES);
      if ((this.totalChangesStmt.get() as number) - before <= 1) return true;
    }
    return false;
  }

  /** Indexes every call stored now (tests, the bench's fill). */
  catchUp(): number {
    let total = 0;
    for (let n = this.step(); n > 0; n = this.step()) total += n;
    return total;
  }

  /**
   * The calls removed (inside the caller's transaction): their entries go. A mark left above the
   * newest call is brought down to it, since SQLite gives the next call the id after the newest.
   */
  forget(ids: number[]): void {
    for (const id of ids) if (id <= this.indexedTo) this.deleteStmt.run(id);
    if (ids.length > 0) this.mergeBehind = true;
    this.lower();
  }

  /** After a rollback: the mark as the database has it. */
  reload(): void {
    this.indexedTo = this.readMark();
  }

  /**
   * The indexed calls whose body holds `term` (from searchTerm: folded), newest first; null when the
   * index cannot answer it (see indexable).
   */
  indexedMatches(term: string): number[] | null {
    if (!indexable(term)) return null;
    return this.matchStmt.all(phrase(term)) as number[];
  }

  /** Every call whose body holds `term`, newest first: the index for the calls it holds, the bodies of the rest. */
  matches(term: string): number[] {
    const indexed = this.indexedMatches(term);
    if (indexed === null) return bodyMatchIds(this.db, this.requests, term, 0).reverse();
    const tail = bodyMatchIds(this.db, this.requests, term, this.indexedTo);
    return tail.length === 0 ? indexed : [...tail.reverse(), ...indexed];
  }

  /**
   * One page of a search in the fields and bodies alone, newest first below `before`, and the total,
   * without listing every match: the index counts its matches and gives only the page's newest ones.
   * `fields` are the calls whose fields hold the term (newest first); those the bodies do not hold
   * are added. Null when that would not be cheaper than listing (a term the index cannot answer, or
   * more than FIELD_CHECK_MAX field matches to look up one by one): the caller lists all.
   */
  page(term: string, fields: number[], before: number | undefined, limit: number): { ids: number[]; total: number; more: boolean } | null {
    if (!indexable(term) || fields.length > FIELD_CHECK_MAX) return null;
    const mark = this.indexedTo;
    const q = phrase(term);
    // Newest first, all above the mark: the calls the index has not reached, read from their bodies.
    const tail = bodyMatchIds(this.db, this.requests, term, mark).reverse();
    const inTail = new Set(tail);
    const extra = fields.filter((id) => (id > mark ? !inTail.has(id) : this.holdsStmt.get(q, id) === undefined));
    const total = (this.countStmt.get(q) as number) + tail.length + extra.length;
    const below = (ids: number[]) => (before === undefined ? ids : ids.filter((id) => id < before));
    const indexed = this.pageStmt.all(q, before ?? Number.MAX_SAFE_INTEGER, limit + 1) as number[];
    // Three lists without a call in common (above the mark, in the index, in neither), merged.
    const merged = mergeNewestFirst(mergeNewestFirst(below(tail), below(extra)), indexed).slice(0, limit + 1);
    return { ids: merged.slice(0, limit), total, more: merged.length > limit };
  }

  /** The same test as SQL on `c.id` (a list with other filters too): the index answered inside the query. */
  sqlTest(term: string): { sql: string; args: unknown[] } {
    if (!indexable(term)) return { sql: 'c.id IN (SELECT value FROM json_each(?))', args: [JSON.stringify(bodyMatchIds(this.db, this.requests, term, 0))] };
    return {
      sql: '(c.id IN (SELECT rowid FROM body_index WHERE body_index MATCH ?) OR c.id IN (SELECT value FROM json_each(?)))',
      args: [phrase(term), JSON.stringify(bodyMatchIds(this.db, this.requests, term, this.indexedTo))],
    };
  }

  /** Starts indexing in the background after `delayMs` (the start's first pages come first). */
  start(delayMs: number): void {
    this.stopped = false;
    this.schedule(delayMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** For tests: no slice runs until resume() (a lab whose indexer is behind). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.tick(), ms);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = null;
    if (this.stopped || !this.db.open) return;
    if (this.paused) return this.schedule(WAIT_MS);
    try {
      const newest = (this.newestStmt.get() as number | null) ?? 0;
      const now = Date.now();
      // Ids only grow while calls arrive (a clear brings them down: nothing arrived then).
      const arrived = this.lastNewest < 0 ? 0 : Math.max(0, newest - this.lastNewest);
      if (newest !== this.lastNewest) {
        this.lastNewest = newest;
        this.lastArrival = now;
      }
      const caughtUp = newest <= this.indexedTo;
      // Caught up with the calls and with FTS5's merges: nothing to do.
      if (caughtUp && !this.mergeBehind) return this.schedule(WAIT_MS);
      const pace = slicePace(arrived, now - this.lastArrival);
      if (!pace.slice) return this.schedule(pace.gapMs);
      // A slice's pages (its postings and FTS5's merge work) would otherwise land on top of a WAL the
      // collector has brought near its 4 MB checkpoint: checkpointed first, the WAL starts again.
      backgroundSlices.time('body index', () => {
        this.db.pragma('wal_checkpoint(PASSIVE)');
        // Caught up with the calls but not with the merges: a slice of merges alone.
        if (caughtUp) this.step(SLICE_MS, 0, SLICE_MS);
        else this.step();
      });
      this.schedule(pace.gapMs);
    } catch {
      // Storage failing (a full disk: storage-health.ts says so): tried again later, the tail is read meanwhile.
      this.schedule(5 * WAIT_MS);
    }
  }

  private readMark(): number {
    return (this.readMarkStmt.get() as number | undefined) ?? 0;
  }

  private lower(): void {
    const newest = (this.newestStmt.get() as number | null) ?? 0;
    if (newest < this.indexedTo) {
      this.markStmt.run(newest);
      this.indexedTo = newest;
    }
  }
}

/** A call's text for the index; an item that cannot be read is indexed empty, so the indexer never stops at it. */
function textOf(requests: RequestsRepo, requestId: number, batchIndex: number | null): string {
  try {
    return bodySearchText(requests.item(requestId, batchIndex));
  } catch {
    return '';
  }
}

/** An FTS5 phrase: the term's characters as they are (a trigram phrase is a substring test). */
function phrase(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

/** Two lists of ids, newest first, as one without repeats. */
export function mergeNewestFirst(a: number[], b: number[]): number[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = i < a.length ? a[i]! : -Infinity;
    const y = j < b.length ? b[j]! : -Infinity;
    if (x >= y) {
      out.push(x);
      i++;
      if (x === y) j++;
    } else {
      out.push(y);
      j++;
    }
  }
  return out;
}

/**
 * A term the index answers exactly: three code points or more, no line break (the text's separator),
 * well formed, and none of U+FFFD, U+FFFE, U+FFFF: FTS5 reads U+FFFE and U+FFFF as U+FFFD (its UTF-8
 * reader, in the text indexed and in the query alike), so the index took any of the three for any
 * other and `x\uFFFDy` found `x\uFFFFy` (issue 37, found by the property test). A term without them
 * has no trigram with U+FFFD, so the ones the index changed cannot match it.
 */
export function indexable(term: string): boolean {
  let n = 0;
  for (const _ of term) if (++n >= INDEXED_TERM_MIN) break;
  return n >= INDEXED_TERM_MIN && !/[\n\0\uFFFD-\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(term);
}

/**
 * The calls above `after` whose own JSON holds `term` (bodyMatches in src/shared/search-filter.ts),
 * exactly, oldest first, in three narrowing steps so that only likely bodies reach JavaScript:
 * 1. request bodies that may hold it, tested by SQLite on the text (never missing one, see mayHold);
 * 2. in those that are batches, the items that may hold it (SQLite's json_each, the same test), so a
 *    term found once in a batch of 500 parses one item, not the batch;
 * 3. each remaining item (or single-call body) parsed and judged by the shared rule.
 * A term held by most calls still parses most of them: the slow case the index is there for.
 */
export function bodyMatchIds(db: Db, requests: RequestsRepo, term: string, after: number): number[] {
  const test = mayHold(term);
  // The requests of the calls above `after`: calls are written in request order.
  const firstRequest = (db.prepare('SELECT request_id FROM calls WHERE id > ? ORDER BY id LIMIT 1').pluck().get(after) as number | undefined) ?? null;
  if (firstRequest === null) return [];
  // `sure`: the text test alone is enough for this body's items (see mayHold); otherwise every item.
  const candidates = db
    .prepare(`SELECT id, ${test.sure('body')} FROM requests WHERE id >= ? AND ${test.may('body')}`)
    .raw()
    .all(...test.args, firstRequest, ...test.args) as [number, number][];
  if (candidates.length === 0) return [];
  const sure = new Map(candidates);
  const calls = db
    .prepare('SELECT id, request_id, batch_index FROM calls WHERE id > ? AND request_id IN (SELECT value FROM json_each(?)) ORDER BY request_id, id')
    .raw()
    .all(after, JSON.stringify(candidates.map((c) => c[0]))) as [number, number, number | null][];
  const someItems = db.prepare(`SELECT j.key, j.type, j.value FROM requests r, json_each(r.body, '$.batch') j WHERE r.id = ? AND ${test.plain('j.value')}`).raw();
  const allItems = db.prepare("SELECT j.key, j.type, j.value FROM requests r, json_each(r.body, '$.batch') j WHERE r.id = ?").raw();
  const out: number[] = [];
  // The batch being read (calls come in request order) and its items that may hold the term.
  let batchId = -1;
  let found = new Map<number, unknown>();
  for (const [id, requestId, batchIndex] of calls) {
    if (batchIndex === null) {
      if (bodyMatches(requests.item(requestId, null), term)) out.push(id);
      continue;
    }
    if (batchId !== requestId) {
      batchId = requestId;
      found = new Map();
      let rows: [number, string, unknown][] | null;
      try {
        rows = (sure.get(requestId) ? someItems.all(requestId, ...test.args) : allItems.all(requestId)) as [number, string, unknown][];
      } catch {
        // SQLite's JSON reader refuses a body nested deeper than its 1,000 levels (a call stored as
        // dropped for its depth): JavaScript reads that batch instead.
        rows = null;
        const batch = (requests.item(requestId, null) as { batch?: unknown } | null)?.batch;
        if (Array.isArray(batch)) batch.forEach((item, i) => found.set(i, item));
      }
      for (const [key, type, value] of rows ?? []) {
        found.set(key, type === 'object' || type === 'array' ? JSON.parse(value as string) : value);
      }
    }
    if (found.has(batchIndex) && bodyMatches(found.get(batchIndex), term)) out.push(id);
  }
  return out.sort((a, b) => a - b);
}

/**
 * SQL tests on JSON text: `may` passes every text whose keys or string values hold `term` once folded
 * (and some that do not); `sure` is true where the `plain` test alone can be trusted for that, and
 * so for each item of that body.
 *
 * For a term of ASCII characters the plain test is LIKE, which ignores ASCII case: over 65 MB of
 * bodies it took 8 ms where the shared rule's own pre-test (wl_body_may_match: V8's toLowerCase and
 * includes on each body) took 130 ms and instr() 50 ms. LIKE can miss only a value written with
 * escapes or holding a character that folds into ASCII from outside it (KELVIN SIGN to k, LATIN
 * CAPITAL I WITH DOT ABOVE to i and a dot); a body holding those is not `sure`. Other terms: the
 * shared pre-test, which is always sure.
 */
function mayHold(term: string): { may: (column: string) => string; sure: (column: string) => string; plain: (column: string) => string; args: unknown[] } {
  if (/^[\x00-\x7f]*$/.test(term)) {
    const plain = (c: string) => `${c} LIKE ? ESCAPE '|'`;
    const odd = (c: string) => `${c} LIKE '%\\%' OR ${c} LIKE '%' || char(8490) || '%' OR ${c} LIKE '%' || char(304) || '%'`;
    return {
      may: (c) => `(${plain(c)} OR ${odd(c)})`,
      sure: (c) => `(${plain(c)} AND NOT (${odd(c)}))`,
      plain,
      args: [`%${term.replace(/[%_|]/g, (m) => `|${m}`)}%`],
    };
  }
  const test = (c: string) => `wl_body_may_match(${c}, ?)`;
  return { may: test, sure: test, plain: test, args: [term] };
}
