// The floor under the collector's batch ingestion (issue 16), in a fresh process of its own:
//   node --expose-gc bench/batch-floor-child.mjs BATCHES SIZE DIR
// The same batch bodies the load generator sends (bodies.mjs: batchBody(`b-${n}`, SIZE) for
// n = 0 … BATCHES-1), each parsed with JSON.parse and stored with better-sqlite3 in one transaction
// per request: one `requests` row holding the body, one `calls` row per item with the columns the
// collector writes. No HTTP, no auth, no validation, no de-duplication, no group commit: what storing
// those requests costs at the least. A fresh database file in DIR with the app's storage settings
// (STORAGE_PRAGMAS of src/main/engine/store/database.ts; until 11-26 the floor left out the
// auto_vacuum and WAL checkpoint size the app had taken since, so it stored more cheaply than the
// app could) and the app's current shape of the two tables (migrations 4, 5 and 8 of
// src/main/engine/store/migrations.ts; no secondary index, as in the app since migration 3).
// Timing: only the parsing and storing, on the wall clock (performance.now()); the bodies are built
// in chunks between timed stretches (the generator builds them in its own process). events/s =
// events stored ÷ seconds timed, the same "events done ÷ elapsed" as the collector's figure.
// Prints one JSON line.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { batchBody } from './lib/bodies.mjs';

const [batchesArg, sizeArg, dir] = process.argv.slice(2);
const BATCHES = Number(batchesArg);
const SIZE = Number(sizeArg);
const CHUNK = 200; // bodies built ahead of each timed stretch (~8 MB of strings for batches of 100)
const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const gc = () => globalThis.gc?.();

const db = new Database(join(dir, 'floor.db'));
// STORAGE_PRAGMAS of src/main/engine/store/database.ts, word for word (tests/unit/bench-floor.test.ts).
const STORAGE_PRAGMAS = [
  'page_size = 16384',
  'auto_vacuum = INCREMENTAL',
  'journal_mode = WAL',
  'wal_autocheckpoint = 256',
  'journal_size_limit = 4194304',
  'synchronous = NORMAL',
  'busy_timeout = 5000',
  'foreign_keys = OFF',
];
for (const pragma of STORAGE_PRAGMAS) db.pragma(pragma);
db.exec(`
  CREATE TABLE requests (
    id INTEGER PRIMARY KEY,
    received_at INTEGER NOT NULL,
    meta TEXT NOT NULL,
    body TEXT NOT NULL
  );
  CREATE TABLE calls (
    id INTEGER PRIMARY KEY,
    source_key INTEGER,
    received_at INTEGER NOT NULL,
    type TEXT NOT NULL,
    user_id TEXT,
    anonymous_id TEXT,
    label TEXT,
    message_id TEXT,
    status TEXT NOT NULL,
    drop_reason TEXT,
    request_id INTEGER NOT NULL,
    batch_index INTEGER,
    timestamp INTEGER,
    normalized TEXT,
    group_id TEXT,
    previous_id TEXT,
    search TEXT
  );
`);
const insertRequest = db.prepare('INSERT INTO requests (received_at, meta, body) VALUES (?, ?, ?)');
const insertCall = db.prepare(`INSERT INTO calls (source_key, received_at, type, user_id, anonymous_id, label, message_id, group_id, previous_id, status, drop_reason, request_id, batch_index, timestamp, normalized, search)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);

const text = (v) => (typeof v === 'string' ? v : null);
/** The searchable fields, set ones joined by line breaks and lowercased, as the app stores them. */
function searchText(fields) {
  let out = '';
  for (const v of fields) if (v) out += out ? `\n${v}` : v;
  return out.toLowerCase();
}

const store = db.transaction((receivedAt, body, items) => {
  // The request's details as the collector keeps them (RequestInfo), serialized per request.
  const meta = JSON.stringify({ path: '/v1/batch', contentType: 'application/json', userAgent: null, writeKeyFrom: 'basic', batchSize: items.length });
  const requestId = insertRequest.run(receivedAt, meta, body).lastInsertRowid;
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    const userId = text(it.userId);
    const anonymousId = text(it.anonymousId);
    const messageId = text(it.messageId);
    const label = text(it.event) ?? text(it.name);
    const timestamp = Date.parse(it.timestamp);
    insertCall.run(1, receivedAt, it.type, userId, anonymousId, label, messageId, null, null, 'accepted', null, requestId, i, Number.isNaN(timestamp) ? receivedAt : timestamp, null, searchText([userId, anonymousId, messageId, label]));
  }
});

const cpu0 = process.cpuUsage();
const wall0 = performance.now();
let timedMs = 0;
let events = 0;
let bytes = 0;
gc();
for (let start = 0; start < BATCHES; start += CHUNK) {
  const bodies = [];
  for (let n = start; n < Math.min(BATCHES, start + CHUNK); n++) bodies.push(batchBody(`b-${n}`, SIZE));
  const t0 = performance.now();
  for (const body of bodies) {
    const receivedAt = Date.now();
    const items = JSON.parse(body).batch;
    store(receivedAt, body, items);
    events += items.length;
    bytes += body.length;
  }
  timedMs += performance.now() - t0;
}
const wallMs = performance.now() - wall0;
const cpu = process.cpuUsage(cpu0);
const stored = db.prepare('SELECT COUNT(*) FROM calls').pluck().get();
db.close();
process.stdout.write(
  `${JSON.stringify({ batches: BATCHES, events, stored, bodyBytes: bytes / BATCHES, timedSeconds: timedMs / 1000, wallSeconds: wallMs / 1000, perSecond: events / (timedMs / 1000), cpuSeconds: (cpu.user + cpu.system) / 1e6 })}\n`,
);
