import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/engine/store/database';
import { CORE_TABLE_SQL as CORE_SQL, CORE_TABLES } from '../../src/main/engine/store/feature-db';
import { LEDGER_TABLES } from '../../src/main/engine/store/delivery-ledger';

/**
 * The store owns the call record (DESIGN.md, issue 16): SQL over the core tables appears only in
 * src/main/engine/store/, and the store's database handle does not leave it. Only string and
 * template literals are read (through the TypeScript scanner), so a comment that says "split into
 * requests" is not SQL, while a query in a template literal is.
 *
 * The core tables are every table the migrations leave in a lab's database except the features'
 * own (FEATURE_TABLES): read from a real migrated file, so a new table is either listed as a
 * feature's or guarded as the store's (issue 27: the pattern had left out the two Actions tables).
 */
const ROOT = join(__dirname, '..', '..');
const SRC = join(ROOT, 'src');
const STORE_DIR = join(SRC, 'main', 'engine', 'store') + sep;
/** The one module that writes deliveries, attempts and the Actions ledger (issue 27: one delivery lifecycle). */
const LEDGER_FILE = join(STORE_DIR, 'delivery-ledger.ts');
/** The schema's history: its data migrations rewrite rows of every table, once, before the store opens. */
const MIGRATIONS_FILE = join(STORE_DIR, 'migrations.ts');

/** SQL that writes one of LEDGER_TABLES: INSERT (OR …) INTO, REPLACE INTO, UPDATE (OR …), DELETE FROM. */
const LEDGER_WRITE_SQL = new RegExp(
  `\\b(?:(?:INSERT|REPLACE)(?:\\s+OR\\s+\\w+)?\\s+INTO|UPDATE(?:\\s+OR\\s+\\w+)?|DELETE\\s+FROM)\\s+(${LEDGER_TABLES.join('|')})\\b`,
  'i',
);

/** Tables a feature keeps beside it, through a repository opened by Store.featureRepo. */
const FEATURE_TABLES: Record<string, string> = {
  mock_receivers: 'simulation/receivers.repo.ts',
  receiver_requests: 'simulation/receivers.repo.ts',
  deletions: 'simulation/deletions.repo.ts',
  audiences: 'simulation/audiences/audiences.repo.ts',
  audience_members: 'simulation/audiences/audiences.repo.ts',
  tracking_plans: 'tracking-plans/plans.repo.ts',
  tracking_plan_connections: 'tracking-plans/plans.repo.ts',
  call_violations: 'tracking-plans/plans.repo.ts',
  checked_requests: 'tracking-plans/plans.repo.ts',
};

/** Every table of a freshly migrated lab database. */
function migratedTables(): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'wl-ownership-'));
  try {
    const db = openDatabase({ dataDir: dir });
    try {
      return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[]);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}


function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every string and template-literal text in a file, with its 1-based line. */
function literals(file: string, text = readFileSync(file, 'utf8')): { line: number; text: string }[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: { line: number; text: string }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      out.push({ line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, text: node.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function coreSqlOutsideStore(): string[] {
  return sourceFiles(SRC)
    .filter((f) => !f.startsWith(STORE_DIR))
    .flatMap((f) =>
      literals(f)
        .filter((l) => CORE_SQL.test(l.text))
        .map((l) => `${relative(ROOT, f)}:${l.line}: ${l.text.replace(/\s+/g, ' ').trim().slice(0, 100)}`),
    );
}

/** Literals writing a delivery table in these files, but in the ledger's own module and the migrations. */
function ledgerWritesElsewhere(files: { file: string; text?: string }[]): string[] {
  return files
    .filter((f) => f.file !== LEDGER_FILE && f.file !== MIGRATIONS_FILE)
    .flatMap((f) =>
      literals(f.file, f.text)
        .filter((l) => LEDGER_WRITE_SQL.test(l.text))
        .map((l) => `${relative(ROOT, f.file)}:${l.line}: ${l.text.replace(/\s+/g, ' ').trim().slice(0, 100)}`),
    );
}

/**
 * Members of class Store a caller outside it can read, that are, or are typed as, the database handle,
 * or methods that hand it on: a parameter (a callback's included) or a result typed with Db or
 * Database (issue 27: featureRepo lent the handle itself to a factory).
 */
function publicDbMembers(file = join(STORE_DIR, 'store.ts'), text = readFileSync(file, 'utf8'), className = 'Store'): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const cls = sf.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === className);
  if (!cls) throw new Error(`class ${className} not found in ${file}`);
  const hidden = (m: ts.ClassElement) =>
    (m.name !== undefined && ts.isPrivateIdentifier(m.name)) ||
    (ts.canHaveModifiers(m) && (ts.getModifiers(m) ?? []).some((k) => k.kind === ts.SyntaxKind.PrivateKeyword || k.kind === ts.SyntaxKind.ProtectedKeyword));
  const typeText = (m: ts.ClassElement) =>
    ts.isPropertyDeclaration(m) || ts.isGetAccessorDeclaration(m) || ts.isMethodDeclaration(m) ? (m.type?.getText(sf) ?? '') : '';
  const handsOn = (m: ts.ClassElement) =>
    (ts.isMethodDeclaration(m) || ts.isPropertyDeclaration(m) || ts.isGetAccessorDeclaration(m)) &&
    [typeText(m), ...(ts.isMethodDeclaration(m) ? m.parameters.map((p) => p.type?.getText(sf) ?? '') : [])].some((t) => /\b(?:Db|Database)\b/.test(t));
  // Constructor parameters with an accessibility modifier are members too (public ones: `readonly db`, not `private readonly db`).
  const isPublicParam = (p: ts.ParameterDeclaration) => {
    const kinds = (ts.getModifiers(p) ?? []).map((k) => k.kind);
    const member = kinds.includes(ts.SyntaxKind.PublicKeyword) || kinds.includes(ts.SyntaxKind.ReadonlyKeyword);
    return member && !kinds.includes(ts.SyntaxKind.PrivateKeyword) && !kinds.includes(ts.SyntaxKind.ProtectedKeyword);
  };
  const ctorParams = cls.members
    .filter(ts.isConstructorDeclaration)
    .flatMap((c) => c.parameters.filter(isPublicParam))
    .filter((p) => p.name.getText(sf) === 'db' || p.type?.getText(sf) === 'Db')
    .map((p) => `constructor parameter ${p.name.getText(sf)}`);
  return cls.members
    .filter((m) => !hidden(m) && !ts.isConstructorDeclaration(m))
    .filter((m) => m.name?.getText(sf) === 'db' || typeText(m) === 'Db' || handsOn(m))
    .map((m) => m.name?.getText(sf) ?? '?')
    .concat(ctorParams);
}

/**
 * The same for every class of the store's files (the repositories Store exposes: store.calls,
 * store.deliveries, store.ledger…): a public `db` on any of them would hand the handle out as well.
 */
function repositoryHandles(files = sourceFiles(STORE_DIR).map((file) => ({ file, text: readFileSync(file, 'utf8') }))): string[] {
  return files.flatMap(({ file, text }) =>
    ts
      .createSourceFile(file, text, ts.ScriptTarget.Latest, true)
      .statements.filter((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name !== undefined)
      .flatMap((c) => publicDbMembers(file, text, c.name!.text).map((m) => `${relative(ROOT, file)}: ${c.name!.text}.${m}`)),
  );
}

describe('the store owns SQL over the core tables', () => {
  it("the core tables are every table of a migrated database but the features' own, the Actions ledger's included", () => {
    const tables = migratedTables();
    expect(tables.filter((t) => !(t in FEATURE_TABLES)).sort()).toEqual([...CORE_TABLES].sort());
    // A feature table that no longer exists is taken off the list.
    expect(Object.keys(FEATURE_TABLES).filter((t) => !tables.includes(t))).toEqual([]);
    for (const t of ['calls', 'requests', 'deliveries', 'attempts', 'source_keys', 'actions_batch_items', 'delivery_calls']) expect(CORE_TABLES).toContain(t);
  });

  it(`no file outside src/main/engine/store/ holds SQL over ${CORE_TABLES.join(', ')}`, () => {
    expect(coreSqlOutsideStore()).toEqual([]);
  });

  it(`only store/delivery-ledger.ts writes ${LEDGER_TABLES.join(', ')}: every delivery is created, scheduled, finished and canceled through it`, () => {
    expect(ledgerWritesElsewhere(sourceFiles(SRC).map((file) => ({ file })))).toEqual([]);
    for (const t of ['deliveries', 'delivery_calls', 'actions_batch_items', 'attempts']) expect(LEDGER_TABLES).toContain(t);
    // The guard must be able to fail: a write anywhere else, in the store too, in any of its forms; reads are not writes.
    const elsewhere = (text: string, file = join(STORE_DIR, 'arrivals.ts')) => ledgerWritesElsewhere([{ file, text }]).length;
    expect(elsewhere("db.prepare('INSERT INTO deliveries (call_id, state) VALUES (?, ?)')")).toBe(1);
    expect(elsewhere("db.prepare('INSERT INTO deliveries (call_id, state) VALUES (?, ?)')", join(SRC, 'main', 'engine', 'dispatcher', 'replay.ts'))).toBe(1);
    expect(elsewhere('db.prepare(`insert or replace into delivery_calls (delivery_id) VALUES (${id})`)')).toBe(1);
    expect(elsewhere("db.prepare(\"UPDATE deliveries SET state = 'canceled' WHERE id = ?\")")).toBe(1);
    expect(elsewhere("db.prepare('UPDATE OR IGNORE attempts SET round = 2')")).toBe(1);
    expect(elsewhere("db.prepare('DELETE FROM actions_batch_items WHERE call_id <= ?')")).toBe(1);
    expect(elsewhere("db.prepare('REPLACE INTO attempts (id) VALUES (1)')")).toBe(1);
    expect(elsewhere("db.prepare('SELECT * FROM deliveries d JOIN attempts a ON a.delivery_id = d.id')")).toBe(0);
    expect(elsewhere('// INSERT INTO deliveries, in a comment\nconst a = 1;')).toBe(0);
    expect(elsewhere("db.prepare('INSERT INTO deliveries (call_id) VALUES (?)')", LEDGER_FILE)).toBe(0);
  });

  it('Store does not expose its database handle, nor lend it to a callback', () => {
    expect(publicDbMembers()).toEqual([]);
    // The guard must be able to fail: the handle as a member, a getter, a result, or a callback's parameter.
    const store = (body: string) => publicDbMembers('store.ts', `class Store {\n  private readonly db: Db;\n${body}\n}`);
    expect(store('featureRepo<T>(make: (db: Db) => T): T { return make(this.db); }')).toEqual(['featureRepo']);
    expect(store('get handle(): Db { return this.db; }')).toEqual(['handle']);
    expect(store('readonly raw: Database.Database;')).toEqual(['raw']);
    expect(store('private open(make: (db: Db) => void): void { make(this.db); }\n  featureRepo<T>(make: (db: FeatureDb) => T): T { return make(featureDb(this.db)); }')).toEqual([]);
  });

  it('no repository of the store (what Store exposes: calls, deliveries, ledger…) holds the handle where a caller can read it', () => {
    expect(repositoryHandles()).toEqual([]);
    // The guard must be able to fail: a public constructor parameter, a field, a getter, in any class of the store's files.
    const file = join(STORE_DIR, 'calls.repo.ts');
    const repo = (text: string) => repositoryHandles([{ file, text }]);
    expect(repo('export class CallsRepo {\n  constructor(readonly db: Db) {}\n}')).toEqual(['src/main/engine/store/calls.repo.ts: CallsRepo.constructor parameter db']);
    expect(repo('class A {\n  db: Db;\n}\nclass B {\n  get raw(): Db { return this.x; }\n}')).toEqual(['src/main/engine/store/calls.repo.ts: A.db', 'src/main/engine/store/calls.repo.ts: B.raw']);
    expect(repo('export class DeliveryLedger {\n  constructor(private readonly db: Db) {}\n}')).toEqual([]);
  });

  // The guard must be able to fail: it sees SQL in each literal form, and skips comments.
  it('recognises core-table SQL in strings and templates, not in comments', () => {
    const probe = (src: string) => literals('probe.ts', src).filter((l) => CORE_SQL.test(l.text)).length;
    expect(probe("db.prepare('SELECT 1 FROM calls WHERE id = ?')")).toBe(1);
    expect(probe('db.prepare(`SELECT d.state FROM deliveries d\n  JOIN calls c ON c.id = d.call_id WHERE c.id > ${x}`)')).toBe(1);
    expect(probe('db.prepare(`SELECT ${cols} FROM x JOIN source_keys k ON k.key = x.k`)')).toBe(1);
    expect(probe("db.prepare('delete from attempts where 1')")).toBe(1);
    expect(probe("db.prepare('INSERT INTO actions_batch_items (delivery_id, call_id) VALUES (?, ?)')")).toBe(1);
    expect(probe('db.prepare(`UPDATE delivery_calls SET x = 1`)')).toBe(1);
    expect(probe("db.prepare('UPDATE sources SET enabled = 0')")).toBe(1);
    expect(probe("db.prepare('SELECT * FROM mock_receivers'); const s = 'calls_fts';")).toBe(0);
    expect(probe('// split into requests of at most 100 messages\nconst a = 1;')).toBe(0);
  });
});
