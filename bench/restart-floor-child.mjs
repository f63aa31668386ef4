// The floor under a restart's first page (issue 40), in a fresh process of its own:
//   node bench/restart-floor-child.mjs DIR
// What the lab cannot do without: start Node, open the data folder's database with better-sqlite3
// and run the inspector's first-page queries (the count of calls and the newest 100 with their
// Webhooks delivery, CallsRepo.list without filters in src/main/engine/store/calls.repo.ts). No HTTP,
// no migrations, no config, no workers, no dispatcher. The bench times this child from spawn to
// exit, as it times `serve` from spawn to its first answered page. Prints one JSON line.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');

// The engine's own text, word for word (tests/unit/bench-floor.test.ts keeps the copies true).
const COUNT_SQL = 'SELECT COUNT(*) AS n FROM calls';
const SUMMARY_COLUMNS = `c.id, c.source_key, c.received_at, c.type, c.user_id, c.anonymous_id, c.label, c.message_id,
  c.group_id, c.previous_id, c.status, c.drop_reason, d.id AS d_id, d.state AS d_state, d.attempt_count AS d_attempts,
  d.next_attempt_at AS d_next, d.last_duration_ms AS d_latency, d.urls AS d_urls, d.url_states AS d_url_states,
  COALESCE((SELECT v.count FROM call_violations v WHERE v.call_id = c.id),
    CASE WHEN c.status != 'dropped' AND EXISTS (SELECT 1 FROM checked_requests q WHERE q.request_id = c.request_id) THEN 0 END) AS violations`;
const CLASSIC_JOIN = "LEFT JOIN deliveries d ON d.call_id = c.id AND d.kind = 'classic'";
const PAGE_SQL = `SELECT ${SUMMARY_COLUMNS} FROM calls c ${CLASSIC_JOIN} ORDER BY c.id DESC LIMIT ?`;

const db = new Database(join(process.argv[2], 'webhook-lab.db'), { fileMustExist: true });
const { n } = db.prepare(COUNT_SQL).get();
const rows = db.prepare(PAGE_SQL).all(100);
db.close();
if (rows.length !== 100) throw new Error(`first page held ${rows.length} calls`);
process.stdout.write(`${JSON.stringify({ total: n, rows: rows.length })}\n`);
