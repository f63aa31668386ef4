import type { Db } from './database';
import { UNFINISHED_SQL } from './delivery-states';

// A source's secrets, kept once and versioned (issue 27, as Svix keeps an endpoint's): the Classic
// X-Signature shared secret ('shared') and the Standard Webhooks whsec_ secret ('standard'). Each
// change is a new version; the one not retired is current. A delivery names the Standard Webhooks
// version it was created with (deliveries.sw_version) instead of copying the secret, so each retry
// signs with it (issue 16); its X-Signature is signed once at creation and stored as the signature.
// A rotation (overlap = 1) also keeps the version it replaced signing for the rotation window, so a
// receiver still holding the old secret verifies while it switches (webhook-signature carries both:
// never more than the current version and the one before it, plus a delivery's own older version
// while that still signs). A window once closed stays closed: a change of the window setting clears
// the overlap of every rotation it closed (closeWindows). An old version is dropped once it is
// neither current, nor the one before it in an open window, nor named by an unfinished delivery (prune):
// its secret is then erased and its row kept (secret '') with its number and time, so an older call
// can still be told which version signed it, "since retired" (issue 40).

export type SecretKind = 'shared' | 'standard';

interface VersionRow {
  source_id: string;
  kind: SecretKind;
  version: number;
  secret: string;
  created_at: number;
  retired_at: number | null;
  overlap: number;
}

/** A source's current version of one secret, as the API shows it (Source.secretVersions). */
export interface CurrentSecret {
  secret: string;
  version: number;
  createdAt: number;
  /** Made by a rotation: the version before it still signs for the rotation window. */
  rotated: boolean;
}

export class SourceSecrets {
  private readonly ofSourceStmt;
  private readonly ofKindStmt;
  private readonly keepsStmt;
  private readonly insertStmt;
  private readonly retireStmt;
  private readonly retiredStmt;
  private readonly eraseStmt;
  private readonly madeByStmt;
  private readonly neededStmt;
  private readonly anyRetiredStmt;
  private readonly closeStmt;

  constructor(db: Db) {
    this.ofSourceStmt = db.prepare('SELECT * FROM source_secrets WHERE source_id = ? AND retired_at IS NULL');
    this.ofKindStmt = db.prepare("SELECT * FROM source_secrets WHERE source_id = ? AND kind = ? AND secret != '' ORDER BY version DESC");
    this.keepsStmt = db.prepare("SELECT 1 FROM source_secrets WHERE source_id = ? AND kind = ? AND version = ? AND secret != ''");
    this.madeByStmt = db.prepare('SELECT version, secret FROM source_secrets WHERE source_id = @sourceId AND kind = @kind AND created_at <= @at AND (retired_at IS NULL OR retired_at > @at) ORDER BY version DESC LIMIT 1');
    this.insertStmt = db.prepare(
      `INSERT INTO source_secrets (source_id, kind, version, secret, created_at, overlap)
       VALUES (@sourceId, @kind, 1 + ifnull((SELECT max(version) FROM source_secrets WHERE source_id = @sourceId AND kind = @kind), 0), @secret, @now, @overlap)
       RETURNING version`,
    );
    this.retireStmt = db.prepare('UPDATE source_secrets SET retired_at = ? WHERE source_id = ? AND kind LIKE ? AND retired_at IS NULL');
    this.retiredStmt = db.prepare("SELECT DISTINCT source_id, kind FROM source_secrets WHERE retired_at IS NOT NULL AND secret != ''");
    this.anyRetiredStmt = db.prepare("SELECT 1 FROM source_secrets WHERE retired_at IS NOT NULL AND secret != '' LIMIT 1");
    this.closeStmt = db.prepare('UPDATE source_secrets SET overlap = 0 WHERE overlap = 1 AND created_at <= ?');
    this.eraseStmt = db.prepare("UPDATE source_secrets SET secret = '' WHERE source_id = ? AND kind = ? AND version = ?");
    // The partial index deliveries_sw_version holds exactly the unfinished deliveries that name a version.
    this.neededStmt = db.prepare(`SELECT 1 FROM deliveries WHERE source_id = ? AND sw_version = ? AND state IN ${UNFINISHED_SQL} LIMIT 1`);
  }

  /** The source's current secrets by kind. */
  current(sourceId: string): Partial<Record<SecretKind, CurrentSecret>> {
    const out: Partial<Record<SecretKind, CurrentSecret>> = {};
    for (const r of this.ofSourceStmt.all(sourceId) as VersionRow[]) {
      out[r.kind] = { secret: r.secret, version: r.version, createdAt: r.created_at, rotated: r.overlap === 1 };
    }
    return out;
  }

  /**
   * Every version of one secret the store still keeps (the current one, and older ones a rotation
   * window or an unfinished delivery keeps), newest first: what verifySignature tries to name the
   * version that made a signature.
   */
  kept(sourceId: string, kind: SecretKind): { version: number; secret: string; current: boolean }[] {
    return (this.ofKindStmt.all(sourceId, kind) as VersionRow[]).map((r) => ({ version: r.version, secret: r.secret, current: r.retired_at === null }));
  }

  /**
   * The version that was current at `at` (epoch ms), and whether the lab still keeps its secret; null
   * when none was (the source had no such secret then).
   */
  versionAt(sourceId: string, kind: SecretKind, at: number): { version: number; kept: boolean } | null {
    const r = this.madeByStmt.get({ sourceId, kind, at }) as { version: number; secret: string } | undefined;
    return r ? { version: r.version, kept: r.secret !== '' } : null;
  }

  /** Whether the lab still keeps this version's secret (false: never made, or erased). */
  keeps(sourceId: string, kind: SecretKind, version: number): boolean {
    return this.keepsStmt.get(sourceId, kind, version) !== undefined;
  }

  /**
   * Makes `secret` the current one (a new version; undefined or '' = none from now on), retiring the
   * one before. `rotate`: the one before keeps signing for the rotation window. Returns the new
   * version, or null for none. Call it only when the secret changes. `fresh`: the source was created
   * in this transaction.
   */
  set(sourceId: string, kind: SecretKind, secret: string | undefined, now: number, rotate = false, fresh = false): CurrentSecret | null {
    // A source just created has nothing to retire (a config import creates thousands at once).
    if (!fresh) this.retireStmt.run(now, sourceId, kind);
    if (!secret) return null;
    const { version } = this.insertStmt.get({ sourceId, kind, secret, now, overlap: rotate ? 1 : 0 }) as { version: number };
    return { secret, version, createdAt: now, rotated: rotate };
  }

  /** A deleted source: nothing of it is current; its versions go once its deliveries are canceled (prune). */
  retireAll(sourceId: string, now: number): void {
    this.retireStmt.run(now, sourceId, '%');
  }

  /**
   * The Standard Webhooks secrets an attempt of a delivery created with `version` signs with at `now`,
   * newest first, each once (rotating back to an earlier secret does not send its signature twice):
   * when `version` still signs for others (it is current, or its successor is a rotation whose window
   * is open), the current version, the one right before it while its window is open, and `version`
   * itself; otherwise `version` alone (issue 16: a retry keeps its secret). So at most three values,
   * however many rotations came in quick succession. Empty when the version is unknown (dropped).
   */
  signingSecrets(sourceId: string, version: number | null, now: number, windowMs: number): string[] {
    if (version === null) return [];
    const rows = this.ofKindStmt.all(sourceId, 'standard') as VersionRow[];
    const own = rows.find((r) => r.version === version);
    if (!own) return [];
    const current = rows.find((r) => r.retired_at === null);
    const out: string[] = [];
    if (current && (own === current || windowOpen(rows, own, now, windowMs))) {
      out.push(current.secret);
      const before = rows.find((r) => r.version < current.version);
      if (before && windowOpen(rows, before, now, windowMs)) out.push(before.secret);
    }
    out.push(own.secret);
    return [...new Set(out)];
  }

  /**
   * The rotation window setting changes from `fromMs` to `toMs`: every rotation whose window has
   * closed by either (at `now`) loses its overlap for good, so raising the setting later never brings
   * an old secret back into signing, whether or not that version was dropped meanwhile.
   */
  closeWindows(now: number, fromMs: number, toMs: number): void {
    this.closeStmt.run(now - Math.min(fromMs, toMs));
  }

  /** Whether any version is retired (prune may have work). */
  anyRetired(): boolean {
    return this.anyRetiredStmt.get() !== undefined;
  }

  /**
   * Erases the versions nothing needs any more: not current, outside every rotation window, and named
   * by no unfinished delivery (their rows stay, without the secret). Returns how many went. Inside a write job.
   */
  prune(now: number, windowMs: number): number {
    let dropped = 0;
    for (const { source_id, kind } of this.retiredStmt.all() as Pick<VersionRow, 'source_id' | 'kind'>[]) {
      const rows = this.ofKindStmt.all(source_id, kind) as VersionRow[];
      const keep = new Set(signingNow(rows, now, windowMs).map((r) => r.version));
      for (const r of rows) {
        if (r.retired_at === null || keep.has(r.version)) continue;
        if (kind === 'standard' && this.neededStmt.get(source_id, r.version)) continue;
        this.eraseStmt.run(source_id, kind, r.version);
        dropped++;
      }
    }
    return dropped;
  }
}

/** The versions new deliveries sign with now: the current one and, while its rotation window is open, the one right before it. */
function signingNow(rows: VersionRow[], now: number, windowMs: number): VersionRow[] {
  const current = rows.find((r) => r.retired_at === null);
  if (!current) return [];
  const before = rows.find((r) => r.version < current.version);
  return before && windowOpen(rows, before, now, windowMs) ? [current, before] : [current];
}

/** Whether retired version `r` still signs for others: the version after it was made by a rotation less than `windowMs` ago. */
function windowOpen(rows: VersionRow[], r: VersionRow, now: number, windowMs: number): boolean {
  const next = rows.filter((n) => n.version > r.version).at(-1);
  return next !== undefined && next.overlap === 1 && now < next.created_at + windowMs;
}
