import { bodyMatches } from '../../../shared/search-filter';
import type { Db } from './database';
import type { RequestsRepo } from './requests.repo';

/**
 * The calls whose own JSON holds `term` (bodyMatches in src/shared/search-filter.ts), exactly, in
 * three narrowing steps so that only likely bodies reach JavaScript:
 * 1. request bodies that may hold it, tested by SQLite on the text (never missing one, see mayHold);
 * 2. in those that are batches, the items that may hold it (SQLite's json_each, the same test), so a
 *    term found once in a batch of 500 parses one item, not the batch;
 * 3. each remaining item (or single-call body) parsed and judged by the shared rule.
 * A term held by most calls still parses most of them: the slow case, measured in `npm run bench`.
 */
export function bodyMatchIds(db: Db, requests: RequestsRepo, term: string): number[] {
  const test = mayHold(term);
  // `sure`: the text test alone is enough for this body's items (see mayHold); otherwise every item.
  const candidates = db.prepare(`SELECT id, ${test.sure('body')} FROM requests WHERE ${test.may('body')}`).raw().all(...test.args, ...test.args) as [number, number][];
  if (candidates.length === 0) return [];
  const sure = new Map(candidates);
  const calls = db
    .prepare('SELECT id, request_id, batch_index FROM calls WHERE request_id IN (SELECT value FROM json_each(?)) ORDER BY request_id, id')
    .raw()
    .all(JSON.stringify(candidates.map((c) => c[0]))) as [number, number, number | null][];
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
      const rows = sure.get(requestId) ? someItems.all(requestId, ...test.args) : allItems.all(requestId);
      for (const [key, type, value] of rows as [number, string, unknown][]) {
        found.set(key, type === 'object' || type === 'array' ? JSON.parse(value as string) : value);
      }
    }
    if (found.has(batchIndex) && bodyMatches(found.get(batchIndex), term)) out.push(id);
  }
  return out;
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
