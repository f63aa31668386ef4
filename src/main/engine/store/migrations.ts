// Versioned schema: migration N brings PRAGMA user_version from N-1 to N. Append only.
export const MIGRATIONS: string[] = [
  /* 1 */ `
  CREATE TABLE sources (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    write_key TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    webhooks TEXT NOT NULL
  );
  CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  -- One row per call (a batch item is a call). raw = the item as sent; normalized = what the dispatcher uses.
  CREATE TABLE calls (
    id INTEGER PRIMARY KEY,
    source_id TEXT,
    received_at INTEGER NOT NULL,
    type TEXT NOT NULL,
    user_id TEXT,
    anonymous_id TEXT,
    label TEXT,
    message_id TEXT,
    status TEXT NOT NULL,
    drop_reason TEXT,
    raw TEXT NOT NULL,
    request TEXT NOT NULL,
    normalized TEXT
  );
  CREATE INDEX calls_message_id ON calls(source_id, message_id);
  CREATE INDEX calls_user_id ON calls(user_id);
  -- The Webhooks destination's delivery of one call: at most one per call.
  CREATE TABLE deliveries (
    id INTEGER PRIMARY KEY,
    call_id INTEGER NOT NULL UNIQUE,
    source_id TEXT NOT NULL,
    type TEXT NOT NULL,
    state TEXT NOT NULL,
    urls TEXT NOT NULL,
    pending_urls TEXT NOT NULL,
    round INTEGER NOT NULL DEFAULT 0,
    attempt_count INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    next_sim_offset_ms INTEGER,
    sim_elapsed_ms INTEGER NOT NULL DEFAULT 0,
    first_attempt_at INTEGER,
    last_attempt_at INTEGER,
    last_duration_ms INTEGER,
    delivered_at INTEGER,
    last_error TEXT,
    body BLOB NOT NULL
  );
  CREATE INDEX deliveries_due ON deliveries(state, next_attempt_at);
  -- Immutable: one row per HTTP attempt. body is NULL when it equals the delivery's body (saves a copy).
  CREATE TABLE attempts (
    id INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL,
    round INTEGER NOT NULL,
    url_index INTEGER NOT NULL,
    url TEXT NOT NULL,
    trigger TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    request_headers TEXT NOT NULL,
    body BLOB,
    signature TEXT,
    response_status INTEGER,
    response_headers TEXT,
    response_body TEXT,
    response_truncated INTEGER NOT NULL DEFAULT 0,
    error_code TEXT,
    error_message TEXT,
    timed_out INTEGER NOT NULL DEFAULT 0,
    outcome TEXT NOT NULL
  );
  CREATE INDEX attempts_delivery ON attempts(delivery_id);
  -- The app's batching client queue, so a quit before a flush loses nothing.
  CREATE TABLE client_queue (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    message TEXT NOT NULL
  );
  `,
  /* 2: simulation (SPEC §6–§7) */ `
  CREATE TABLE mock_receivers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    definition TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE receiver_requests (
    id TEXT PRIMARY KEY,
    receiver_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    record TEXT NOT NULL
  );
  CREATE INDEX receiver_requests_receiver ON receiver_requests(receiver_id, at);
  CREATE TABLE deletions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    purge INTEGER NOT NULL,
    purged_calls INTEGER NOT NULL DEFAULT 0,
    call_ids TEXT NOT NULL
  );
  CREATE TABLE audiences (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    key TEXT NOT NULL,
    type TEXT NOT NULL,
    definition TEXT NOT NULL,
    source_ids TEXT NOT NULL,
    sync_interval_ms INTEGER,
    created_at INTEGER NOT NULL,
    last_sync_at INTEGER,
    member_count INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE audience_members (
    audience_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (audience_id, user_id)
  ) WITHOUT ROWID;
  `,
  /* 3: no secondary indexes on calls. De-duplication moved to memory (dedup-window.ts); user lookups
     (deletions, filters) are rare and scan fine at the retention size. Each index made inserts dearer. */ `
  DROP INDEX IF EXISTS calls_message_id;
  DROP INDEX IF EXISTS calls_user_id;
  `,
  /* 4: request bodies stored once (requests.repo.ts). A call row keeps its request's id and its index
     in the batch instead of its own copy of the item and of the request details, and its normalized
     form only when it cannot be rebuilt from that body (calls the app makes itself); `timestamp` is
     the normalized timestamp in epoch ms. Calls stored before this version become one request each,
     their item as its body (batch position kept in meta), their normalized form kept. */ `
  CREATE TABLE requests (
    id INTEGER PRIMARY KEY,
    received_at INTEGER NOT NULL,
    meta TEXT NOT NULL,
    body TEXT NOT NULL
  );
  INSERT INTO requests (id, received_at, meta, body) SELECT id, received_at, request, raw FROM calls;
  CREATE TABLE calls_v4 (
    id INTEGER PRIMARY KEY,
    source_id TEXT,
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
    normalized TEXT
  );
  INSERT INTO calls_v4 (id, source_id, received_at, type, user_id, anonymous_id, label, message_id, status, drop_reason, request_id, batch_index, timestamp, normalized)
    SELECT id, source_id, received_at, type, user_id, anonymous_id, label, message_id, status, drop_reason, id, NULL,
      CAST(round((julianday(json_extract(normalized, '$.timestamp')) - 2440587.5) * 86400000) AS INTEGER), normalized FROM calls;
  DROP TABLE calls;
  ALTER TABLE calls_v4 RENAME TO calls;
  `,
  /* 5: a call names its source by a small integer key instead of the source's 36-character id:
     binding and storing that text was a fifth of the cost of inserting a call. Keys are never
     reused or deleted, so calls of a deleted source keep its id. */ `
  CREATE TABLE source_keys (
    key INTEGER PRIMARY KEY,
    source_id TEXT NOT NULL UNIQUE
  );
  INSERT INTO source_keys (source_id) SELECT id FROM sources ORDER BY created_at, id;
  INSERT OR IGNORE INTO source_keys (source_id) SELECT DISTINCT source_id FROM calls WHERE source_id IS NOT NULL ORDER BY source_id;
  CREATE TABLE calls_v5 (
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
    normalized TEXT
  );
  INSERT INTO calls_v5 (id, source_key, received_at, type, user_id, anonymous_id, label, message_id, status, drop_reason, request_id, batch_index, timestamp, normalized)
    SELECT c.id, k.key, c.received_at, c.type, c.user_id, c.anonymous_id, c.label, c.message_id, c.status, c.drop_reason, c.request_id, c.batch_index, c.timestamp, c.normalized
    FROM calls c LEFT JOIN source_keys k ON k.source_id = c.source_id ORDER BY c.id;
  DROP TABLE calls;
  ALTER TABLE calls_v5 RENAME TO calls;
  `,
  /* 6: each delivery keeps its URLs' outcomes (url-states.ts): url_states, one [state, lastStatus,
     attempts] per URL, NULL until the first attempt (every URL pending); url_mask, one bit per state
     present (pending 1, delivered 4, retrying 8, failed 16, expired 32, not_attempted 64), for the
     inspector's urlState filter. Deliveries with attempts get theirs from their attempts rows. */ `
  ALTER TABLE deliveries ADD COLUMN url_states TEXT;
  ALTER TABLE deliveries ADD COLUMN url_mask INTEGER NOT NULL DEFAULT 1;
  CREATE TEMP TABLE url_state_v6 AS
    SELECT delivery_id, idx, n, status,
      CASE
        WHEN n = 0 THEN CASE WHEN pending AND d_state IN ('pending', 'in_flight') THEN 'pending'
                             WHEN pending AND d_state = 'retrying' THEN 'retrying' ELSE 'not_attempted' END
        WHEN outcome = 'success' THEN 'delivered'
        WHEN pending AND d_state IN ('retrying', 'in_flight') THEN 'retrying'
        WHEN pending AND d_state = 'pending' THEN 'pending'
        WHEN d_state = 'expired' AND outcome = 'retryable' THEN 'expired'
        ELSE 'failed'
      END AS state
    FROM (
      SELECT d.id AS delivery_id, u.key AS idx, d.state AS d_state,
        EXISTS (SELECT 1 FROM json_each(d.pending_urls) p WHERE p.value = u.key) AS pending,
        (SELECT COUNT(*) FROM attempts a WHERE a.delivery_id = d.id AND a.url_index = u.key) AS n,
        (SELECT a.response_status FROM attempts a WHERE a.delivery_id = d.id AND a.url_index = u.key ORDER BY a.id DESC LIMIT 1) AS status,
        (SELECT a.outcome FROM attempts a WHERE a.delivery_id = d.id AND a.url_index = u.key ORDER BY a.id DESC LIMIT 1) AS outcome
      FROM deliveries d, json_each(d.urls) u
      WHERE EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = d.id)
    );
  CREATE INDEX temp.url_state_v6_delivery ON url_state_v6(delivery_id, idx);
  UPDATE deliveries SET
    url_states = (SELECT json_group_array(json_array(state, status, n)) FROM
      (SELECT state, status, n FROM url_state_v6 s WHERE s.delivery_id = deliveries.id ORDER BY idx)),
    url_mask = (SELECT SUM(DISTINCT CASE state WHEN 'pending' THEN 1 WHEN 'delivered' THEN 4 WHEN 'retrying' THEN 8
      WHEN 'failed' THEN 16 WHEN 'expired' THEN 32 ELSE 64 END) FROM url_state_v6 s WHERE s.delivery_id = deliveries.id)
  WHERE id IN (SELECT delivery_id FROM url_state_v6);
  DROP TABLE url_state_v6;
  `,
  /* 7: a delivery is self-contained: the User-Agent and X-Signature its retries send are fixed when
     it is created (NULL signature = unsigned). Deliveries made before have user_agent NULL and are
     sent as before, with the settings and secret current at each attempt. */ `
  ALTER TABLE deliveries ADD COLUMN user_agent TEXT;
  ALTER TABLE deliveries ADD COLUMN signature TEXT;
  `,
  /* 8: search (src/shared/search-filter.ts). A call keeps its groupId and previousId, and `search`,
     its searchable fields folded into one text by the shared rule, which the engine registers as the
     SQL function wl_search_text before migrating: a search is then one instr() per row. Measured over
     200,000 calls against an FTS5 trigram index, which answered rare terms faster but made every
     stored call 5 to 9 times dearer to insert (README, Performance). Older calls of type group and alias get
     their ids from the body they arrived in (or their stored normalized form). */ `
  ALTER TABLE calls ADD COLUMN group_id TEXT;
  ALTER TABLE calls ADD COLUMN previous_id TEXT;
  ALTER TABLE calls ADD COLUMN search TEXT;
  CREATE TEMP TABLE ids_v8 AS
    SELECT id,
      CASE json_type(item, '$.groupId') WHEN 'text' THEN json_extract(item, '$.groupId')
        WHEN 'integer' THEN CAST(json_extract(item, '$.groupId') AS TEXT) WHEN 'real' THEN CAST(json_extract(item, '$.groupId') AS TEXT) END AS group_id,
      CASE json_type(item, '$.previousId') WHEN 'text' THEN json_extract(item, '$.previousId')
        WHEN 'integer' THEN CAST(json_extract(item, '$.previousId') AS TEXT) WHEN 'real' THEN CAST(json_extract(item, '$.previousId') AS TEXT) END AS previous_id
    FROM (
      SELECT c.id,
        CASE WHEN json_valid(c.normalized) AND json_type(c.normalized) = 'object' THEN c.normalized
             WHEN json_valid(r.body) AND json_type(r.body, c.path) = 'object' THEN json_extract(r.body, c.path)
        END AS item
      FROM (SELECT id, normalized, request_id, CASE WHEN batch_index IS NULL THEN '$' ELSE '$.batch[' || batch_index || ']' END AS path
            FROM calls WHERE type IN ('group', 'alias')) c
      JOIN requests r ON r.id = c.request_id
    )
    WHERE item IS NOT NULL;
  UPDATE calls SET group_id = (SELECT group_id FROM ids_v8 WHERE ids_v8.id = calls.id),
    previous_id = (SELECT previous_id FROM ids_v8 WHERE ids_v8.id = calls.id)
  WHERE id IN (SELECT id FROM ids_v8);
  DROP TABLE ids_v8;
  UPDATE calls SET search = wl_search_text(user_id, anonymous_id, message_id, label, group_id, previous_id);
  `,
  /* 9: an attempt's time split, as the HTTP sender measures it (AttemptTiming in shared/types.ts):
     connect and TLS of a new connection (NULL on a reused keep-alive connection, TLS NULL for http),
     time to first byte and total, in ms to 0.1 ms; conn_reused 1 when the request went out on a
     kept-alive connection. All NULL for attempts made before, and for those that never had a
     connection (refused, TLS failure): the inspector then shows the duration only. */ `
  ALTER TABLE attempts ADD COLUMN connect_ms REAL;
  ALTER TABLE attempts ADD COLUMN tls_ms REAL;
  ALTER TABLE attempts ADD COLUMN ttfb_ms REAL;
  ALTER TABLE attempts ADD COLUMN total_ms REAL;
  ALTER TABLE attempts ADD COLUMN conn_reused INTEGER;
  `,
  /* 10: normalize once, versioned (README, Decisions). A received call's normalized form is not
     stored: it is rebuilt from the request it arrived in when read, by the rules of the version the
     call is stamped with (NORMALIZE_VERSION, src/shared/normalize.ts), so a later change of a rule
     cannot rewrite how an older call reads back. Calls stored before are version 1, the rules they
     have been read back with until now; as the column's default that costs no rewrite of the table. */ `
  ALTER TABLE calls ADD COLUMN normalize_version INTEGER NOT NULL DEFAULT 1;
  `,
  /* 11: Webhooks (Actions) deliveries (issue 17; notes/actions-design.md). A call now has its Classic
     delivery and one per Actions mapping that took it, and a batch delivery carries many calls, so
     deliveries is rebuilt without UNIQUE(call_id) (SQLite cannot drop a constraint in place). One
     index takes the unique one's place: (call_id, kind, mapping), unique, so a call still has at most
     one Classic delivery and at most one per mapping as the first call it carries, and the summary's
     join on (call_id, kind = 'classic') still reads one index entry. New columns: kind ('classic' |
     'actions'), mapping (its name; NULL for Classic), method, timeout_ms (NULL = the retry preset's),
     sw_id and sw_secret (Standard Webhooks webhook-id and the secret each attempt signs with, frozen
     at creation; NULL when the source had none), item_count (calls carried). delivery_calls lists the
     calls an Actions delivery carries (item = position in a batch's array); actions_batch_items holds
     calls waiting for their mapping's batch, written with the call. */ `
  CREATE TABLE deliveries_v11 (
    id INTEGER PRIMARY KEY,
    call_id INTEGER NOT NULL,
    source_id TEXT NOT NULL,
    type TEXT NOT NULL,
    state TEXT NOT NULL,
    urls TEXT NOT NULL,
    pending_urls TEXT NOT NULL,
    round INTEGER NOT NULL DEFAULT 0,
    attempt_count INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    next_sim_offset_ms INTEGER,
    sim_elapsed_ms INTEGER NOT NULL DEFAULT 0,
    first_attempt_at INTEGER,
    last_attempt_at INTEGER,
    last_duration_ms INTEGER,
    delivered_at INTEGER,
    last_error TEXT,
    body BLOB NOT NULL,
    url_states TEXT,
    url_mask INTEGER NOT NULL DEFAULT 1,
    user_agent TEXT,
    signature TEXT,
    kind TEXT NOT NULL DEFAULT 'classic',
    mapping TEXT,
    method TEXT NOT NULL DEFAULT 'POST',
    timeout_ms INTEGER,
    sw_id TEXT,
    sw_secret TEXT,
    item_count INTEGER NOT NULL DEFAULT 1
  );
  INSERT INTO deliveries_v11 (id, call_id, source_id, type, state, urls, pending_urls, round, attempt_count, next_attempt_at,
    next_sim_offset_ms, sim_elapsed_ms, first_attempt_at, last_attempt_at, last_duration_ms, delivered_at, last_error, body,
    url_states, url_mask, user_agent, signature)
  SELECT id, call_id, source_id, type, state, urls, pending_urls, round, attempt_count, next_attempt_at,
    next_sim_offset_ms, sim_elapsed_ms, first_attempt_at, last_attempt_at, last_duration_ms, delivered_at, last_error, body,
    url_states, url_mask, user_agent, signature FROM deliveries;
  DROP TABLE deliveries;
  ALTER TABLE deliveries_v11 RENAME TO deliveries;
  CREATE UNIQUE INDEX deliveries_call ON deliveries(call_id, kind, ifnull(mapping, ''));
  CREATE INDEX deliveries_due ON deliveries(state, next_attempt_at);
  CREATE TABLE delivery_calls (
    delivery_id INTEGER NOT NULL,
    call_id INTEGER NOT NULL,
    item INTEGER NOT NULL,
    PRIMARY KEY (delivery_id, item)
  ) WITHOUT ROWID;
  CREATE INDEX delivery_calls_call ON delivery_calls(call_id);
  CREATE TABLE actions_batch_items (
    id INTEGER PRIMARY KEY,
    source_id TEXT NOT NULL,
    mapping TEXT NOT NULL,
    call_id INTEGER NOT NULL,
    data TEXT NOT NULL,
    queued_at INTEGER NOT NULL
  );
  CREATE INDEX actions_batch_items_batch ON actions_batch_items(source_id, mapping, id);
  CREATE INDEX actions_batch_items_call ON actions_batch_items(call_id);
  `,
  /* 12: work waiting for a busy receiver waits as rows (issue 22). A delivery none of whose URLs has a
     free slot in its receiver's lane (dispatcher/lanes.ts) and that does not fit the lane's short
     queue in memory is parked: parked_lane names the lane (origin and path) it waits for, and the
     dispatcher claims parked rows, oldest first, as the lane frees. NULL for every other delivery. */ `
  ALTER TABLE deliveries ADD COLUMN parked_lane TEXT;
  CREATE INDEX deliveries_parked ON deliveries(parked_lane, id) WHERE parked_lane IS NOT NULL;
  `,
  /* 13: tracking plans (issue 24, src/main/engine/tracking-plans/). tracking_plans holds each plan's
     rules as JSON (Segment's Public API rule shape); tracking_plan_connections, at most one plan per
     source with Protocols' enforcement settings; call_violations, what checking a call against its
     source's plan found when it arrived (a row only for checked calls: 0 violations = clean), written
     with the call, with its source, event and time copied so summaries need no join with calls. A
     trigger removes a call's row when the call is deleted (retention, purge, clear). */ `
  CREATE TABLE tracking_plans (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    rules TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE tracking_plan_connections (
    source_id TEXT PRIMARY KEY,
    plan_id TEXT NOT NULL,
    unplanned_events TEXT NOT NULL,
    unplanned_properties TEXT NOT NULL,
    violations TEXT NOT NULL
  );
  CREATE TABLE call_violations (
    call_id INTEGER PRIMARY KEY,
    source_id TEXT NOT NULL,
    plan_id TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    type TEXT NOT NULL,
    label TEXT,
    count INTEGER NOT NULL,
    blocked TEXT,
    violations TEXT NOT NULL,
    omitted TEXT
  );
  CREATE INDEX call_violations_source ON call_violations(source_id, received_at);
  CREATE TRIGGER calls_deleted_violations AFTER DELETE ON calls BEGIN
    DELETE FROM call_violations WHERE call_id = OLD.id;
  END;
  `,
  /* 14: a clean call is no longer a row (issue 24): writing one call_violations row per checked call
     cost about 5 µs of the collector's time per call. checked_requests says which requests were
     checked, and how many of their calls, in one row per request; call_violations keeps only calls
     with violations (or blocked, or with properties omitted). A checked call without a row is clean. */ `
  DELETE FROM call_violations WHERE count = 0 AND blocked IS NULL AND omitted IS NULL;
  CREATE TABLE checked_requests (
    request_id INTEGER PRIMARY KEY,
    source_id TEXT NOT NULL,
    plan_id TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    checked INTEGER NOT NULL
  );
  CREATE INDEX checked_requests_time ON checked_requests(received_at);
  CREATE TRIGGER requests_deleted_checked AFTER DELETE ON requests BEGIN
    DELETE FROM checked_requests WHERE request_id = OLD.id;
  END;
  `,
  /* 15: how many calls of a checked request each rule checked (issue 24: the plan screen's matched,
     passed and failed per rule): a JSON object of rule (type, key, version) to count; NULL before. */ `
  ALTER TABLE checked_requests ADD COLUMN rules TEXT;
  `,
  /* 16: facts on the attempt (issue 27), so nothing parses them back out of its message: timeout_ms,
     the limit a timed-out attempt hit; tls_kind, a TLS error's kind (its code is error_code);
     connect_error 1 when no response came because the connection failed or broke first. Attempts made
     before get them from what they recorded, by the same shared tables the dispatcher now uses
     (wl_tls_kind, wl_connect_code: database.ts) and the one message a timeout was written with, in one
     pass over the failed ones (400,000 attempts, 30 % failed: 1.1–2.0 s once, 2 cores at load 13). */ `
  ALTER TABLE attempts ADD COLUMN timeout_ms INTEGER;
  ALTER TABLE attempts ADD COLUMN tls_kind TEXT;
  ALTER TABLE attempts ADD COLUMN connect_error INTEGER NOT NULL DEFAULT 0;
  UPDATE attempts SET
    timeout_ms = CASE WHEN timed_out = 1 AND error_message LIKE 'timed out after % ms' THEN CAST(substr(error_message, 17) AS INTEGER) END,
    tls_kind = CASE WHEN timed_out = 0 AND response_status IS NULL THEN wl_tls_kind(error_code) END,
    connect_error = timed_out = 0 AND response_status IS NULL AND wl_tls_kind(error_code) IS NULL AND wl_connect_code(error_code) = 1
  WHERE error_code IS NOT NULL;
  `,
  /* 17: secrets kept once, versioned (issue 27; store/source-secrets.ts). A source's Classic shared
     secret and Standard Webhooks secret move out of sources.webhooks into source_secrets, one row per
     version (retired_at NULL = current; overlap 1 = made by a rotation, the version before still signs
     for the rotation window). A delivery names the Standard Webhooks version it signs with
     (sw_version) instead of carrying the secret: each secret deliveries were frozen with that is not
     their source's current one becomes an older version (retired, in the order first used), and
     sw_secret is emptied (left as a column: dropping it would rewrite every delivery of a full lab).
     deliveries_sw_version holds the unfinished deliveries naming a version, for dropping old ones. */ `
  CREATE TABLE source_secrets (
    source_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    version INTEGER NOT NULL,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    retired_at INTEGER,
    overlap INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (source_id, kind, version)
  ) WITHOUT ROWID;
  ALTER TABLE deliveries ADD COLUMN sw_version INTEGER;
  INSERT INTO source_secrets (source_id, kind, version, secret, created_at, retired_at)
    SELECT d.source_id, 'standard', row_number() OVER (PARTITION BY d.source_id ORDER BY min(d.id)), d.sw_secret,
      CAST(strftime('%s', 'now') AS INTEGER) * 1000, CAST(strftime('%s', 'now') AS INTEGER) * 1000
    FROM deliveries d LEFT JOIN sources s ON s.id = d.source_id
    WHERE d.sw_secret IS NOT NULL AND d.sw_secret != '' AND d.sw_secret IS NOT json_extract(s.webhooks, '$.standardWebhooksSecret')
    GROUP BY d.source_id, d.sw_secret;
  INSERT INTO source_secrets (source_id, kind, version, secret, created_at)
    SELECT s.id, 'standard', 1 + (SELECT count(*) FROM source_secrets o WHERE o.source_id = s.id AND o.kind = 'standard'),
      json_extract(s.webhooks, '$.standardWebhooksSecret'), CAST(strftime('%s', 'now') AS INTEGER) * 1000
    FROM sources s WHERE ifnull(json_extract(s.webhooks, '$.standardWebhooksSecret'), '') != '';
  INSERT INTO source_secrets (source_id, kind, version, secret, created_at)
    SELECT id, 'shared', 1, json_extract(webhooks, '$.sharedSecret'), CAST(strftime('%s', 'now') AS INTEGER) * 1000
    FROM sources WHERE ifnull(json_extract(webhooks, '$.sharedSecret'), '') != '';
  UPDATE deliveries SET sw_version = (SELECT v.version FROM source_secrets v WHERE v.source_id = deliveries.source_id AND v.kind = 'standard' AND v.secret = deliveries.sw_secret),
    sw_secret = NULL
  WHERE sw_secret IS NOT NULL;
  UPDATE sources SET webhooks = json_remove(webhooks, '$.sharedSecret', '$.standardWebhooksSecret');
  CREATE INDEX deliveries_sw_version ON deliveries(source_id, sw_version) WHERE sw_version IS NOT NULL AND state IN ('pending', 'in_flight', 'retrying');
  `,
  /* 18: "Search bodies" at field-search speed (issue 27; store/body-search.ts): a trigram index of
     each call's body text (its keys and string values, folded by the shared rule), contentless (the
     bodies stay in requests only) and fed in the background, oldest first; body_index_state says up to
     which call. Calls above it are searched by reading their bodies, so an existing lab's calls are
     found from the start and indexed while the lab is idle. */ `
  CREATE VIRTUAL TABLE body_index USING fts5(text, tokenize = 'trigram case_sensitive 1', content = '', contentless_delete = 1);
  CREATE TABLE body_index_state (indexed_to INTEGER NOT NULL);
  INSERT INTO body_index_state (indexed_to) VALUES (0);
  `,
  /* 19: a call's id is never given again (calls.repo.ts): SQLite gives the next row the newest id
     plus one, so once the newest calls were deleted (a clear, an erasure) their ids came back, and an
     old `#/inspector/<id>` link or `after=` cursor named another call. The newest id ever issued is
     kept here when calls are removed. */ `
  CREATE TABLE call_ids (issued_to INTEGER NOT NULL);
  INSERT INTO call_ids (issued_to) SELECT IFNULL(MAX(id), 0) FROM calls;
  `,
  /* 20: duplicates stay caught across a restart after retention removed the first call (calls.repo.ts):
     the duplicate window is filled at start from the calls kept, so a call retention removed within
     its 24 h was forgotten. Retention keeps such a call's messageId here until the 24 h are over. */ `
  CREATE TABLE dedup_retired (source_key INTEGER NOT NULL, message_id TEXT NOT NULL, received_at INTEGER NOT NULL);
  `,
  /* 21: the body index is built again (issue 37): a body holding U+0000 was indexed with it, which the
     trigram tokenizer skips, so a term spanning it matched. Until the indexer has caught up again in
     the background, the calls it has not reached are searched by reading their bodies, exact as ever. */ `
  INSERT INTO body_index (body_index) VALUES ('delete-all');
  UPDATE body_index_state SET indexed_to = 0;
  `,
  /* 22: an Actions mapping's URL and header values may be directives resolved per call (issue 37):
     a waiting batch item keeps what its call resolved to, and goes only in a batch with items going
     to the same place ('' = the mapping's literal URL and headers, as every item before). */ `
  ALTER TABLE actions_batch_items ADD COLUMN target TEXT NOT NULL DEFAULT '';
  `,
  /* 23: a config import writes its new sources in slices ahead of the transaction that makes them
     sources (issue 38; import-config.ts): 10,000 of them in one transaction held the event loop for
     a third of a second. Their rows carry the import's id, listed in config_imports until that
     transaction commits; a start deletes the rows of an import still listed (one a crash cut short). */ `
  ALTER TABLE sources ADD COLUMN import_id TEXT;
  CREATE TABLE config_imports (id TEXT PRIMARY KEY, started_at INTEGER NOT NULL);
  `,
  /* 24: a plan's figures (the plans screen's card and rules: blocked calls, unplanned events, failures
     by rule) read its calls with violations of the last hour; without this index each read scanned
     every source's. */ `
  CREATE INDEX call_violations_plan ON call_violations(plan_id, received_at);
  `,
  /* 25: each scheduled attempt keeps where it fell in simulated time (issue 40): the inspector shows
     an attempt's offset from its call's arrival, and under a time warp the wall clock says nothing of
     the schedule. NULL for manual attempts, replays, probes and attempts made before. */ `
  ALTER TABLE attempts ADD COLUMN sim_offset_ms INTEGER;
  `,
  /* 26: the body index's merges are made in bounded steps by its indexer (store/body-search.ts):
     FTS5's automerge merged inside whichever slice's insert filled a level, for as long as it took
     (issue 38). Its crisis merge, at 16 segments on a level, stays as a safety net. */ `
  INSERT INTO body_index (body_index, rank) VALUES ('automerge', 0);
  `,
  /* 27: retired messageIds leave by age through an index (calls.repo.ts, expireRetired): without it
     each retention slice read all of them, up to 200,000 rows, 20-30 ms (issue 38). */ `
  CREATE INDEX dedup_retired_time ON dedup_retired(received_at);
  `,
  /* 28: checked_requests without its index on the time (issue 38): each commit of a source with a
     tracking plan wrote that index's page besides the table's, most of what a plan cost the collector.
     Reads by time find their first request by a search over the ids on seen_by, the latest time of the
     rows up to each one (plans.repo.ts, firstCheckedSince); rows before this get theirs here. */ `
  DROP INDEX IF EXISTS checked_requests_time;
  ALTER TABLE checked_requests ADD COLUMN seen_by INTEGER NOT NULL DEFAULT 0;
  UPDATE checked_requests SET seen_by = m.seen_by
    FROM (SELECT request_id, MAX(received_at) OVER (ORDER BY request_id) AS seen_by FROM checked_requests) AS m
    WHERE m.request_id = checked_requests.request_id;
  `,
];
