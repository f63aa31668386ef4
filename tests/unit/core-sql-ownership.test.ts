import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The store owns the call record (DESIGN.md, issue 16): SQL over the core tables appears only in
 * src/main/engine/store/, and the store's database handle does not leave it. Only string and
 * template literals are read (through the TypeScript scanner), so a comment that says "split into
 * requests" is not SQL, while a query in a template literal is.
 */
const ROOT = join(__dirname, '..', '..');
const SRC = join(ROOT, 'src');
const STORE_DIR = join(SRC, 'main', 'engine', 'store') + sep;
const CORE_SQL = /\b(?:FROM|JOIN|INTO|UPDATE|DELETE\s+FROM)\s+(?:calls|requests|deliveries|attempts|source_keys)\b/i;

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

/** Members of class Store a caller outside it can read, that are, or are typed as, the database handle. */
function publicDbMembers(): string[] {
  const file = join(STORE_DIR, 'store.ts');
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const cls = sf.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === 'Store');
  if (!cls) throw new Error('class Store not found in store.ts');
  const hidden = (m: ts.ClassElement) =>
    (m.name !== undefined && ts.isPrivateIdentifier(m.name)) ||
    (ts.canHaveModifiers(m) && (ts.getModifiers(m) ?? []).some((k) => k.kind === ts.SyntaxKind.PrivateKeyword || k.kind === ts.SyntaxKind.ProtectedKeyword));
  const typeText = (m: ts.ClassElement) =>
    ts.isPropertyDeclaration(m) || ts.isGetAccessorDeclaration(m) || ts.isMethodDeclaration(m) ? (m.type?.getText(sf) ?? '') : '';
  // Constructor parameters with an accessibility modifier are members too.
  const ctorParams = cls.members
    .filter(ts.isConstructorDeclaration)
    .flatMap((c) => c.parameters.filter((p) => (ts.getModifiers(p) ?? []).some((k) => k.kind === ts.SyntaxKind.PublicKeyword || k.kind === ts.SyntaxKind.ReadonlyKeyword)))
    .filter((p) => p.name.getText(sf) === 'db' || p.type?.getText(sf) === 'Db')
    .map((p) => `constructor parameter ${p.name.getText(sf)}`);
  return cls.members
    .filter((m) => !hidden(m) && !ts.isConstructorDeclaration(m))
    .filter((m) => m.name?.getText(sf) === 'db' || typeText(m) === 'Db')
    .map((m) => m.name?.getText(sf) ?? '?')
    .concat(ctorParams);
}

describe('the store owns SQL over the core tables', () => {
  it('no file outside src/main/engine/store/ holds SQL over calls, requests, deliveries, attempts or source_keys', () => {
    expect(coreSqlOutsideStore()).toEqual([]);
  });

  it('Store does not expose its database handle', () => {
    expect(publicDbMembers()).toEqual([]);
  });

  // The guard must be able to fail: it sees SQL in each literal form, and skips comments.
  it('recognises core-table SQL in strings and templates, not in comments', () => {
    const probe = (src: string) => literals('probe.ts', src).filter((l) => CORE_SQL.test(l.text)).length;
    expect(probe("db.prepare('SELECT 1 FROM calls WHERE id = ?')")).toBe(1);
    expect(probe('db.prepare(`SELECT d.state FROM deliveries d\n  JOIN calls c ON c.id = d.call_id WHERE c.id > ${x}`)')).toBe(1);
    expect(probe('db.prepare(`SELECT ${cols} FROM x JOIN source_keys k ON k.key = x.k`)')).toBe(1);
    expect(probe("db.prepare('delete from attempts where 1')")).toBe(1);
    expect(probe("db.prepare('SELECT * FROM mock_receivers'); const s = 'calls_fts';")).toBe(0);
    expect(probe('// split into requests of at most 100 messages\nconst a = 1;')).toBe(0);
  });
});
