import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * "Inside a write job" is checked by the compiler (issue 41): the ledger's writes take a WriteTx,
 * which only the write queue's jobs and ownTransaction hand out. These hold the two ends of that:
 * nothing else makes a token (a cast would make the check a comment again), and every write of the
 * ledger asks for one, except those that run a transaction of their own, named here with why.
 */
const ROOT = join(__dirname, '..', '..');
const SRC = join(ROOT, 'src');
const MAKER = join(SRC, 'main', 'engine', 'store', 'write-queue.ts');
const LEDGER = join(SRC, 'main', 'engine', 'store', 'delivery-ledger.ts');

/** Ledger methods with a transaction of their own (ownTransaction, or one statement), and why they are not queued. */
const OWN_TRANSACTION: Record<string, string> = {
  retargetUnfinished: 'at start, before the dispatcher reads the rows back',
  park: "a lane's next claim must see it at once",
  claimParked: 'read and unparked in one step, as the lane takes them',
  rescale: 'one statement; the timers are armed from the rows at once',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

/** Every `x as WriteTx` and `<WriteTx>x` in a file, by line. */
function casts(sf: ts.SourceFile): number[] {
  const lines: number[] = [];
  const visit = (n: ts.Node) => {
    if ((ts.isAsExpression(n) || ts.isTypeAssertionExpression(n)) && /\bWriteTx\b/.test(n.type.getText(sf))) {
      lines.push(sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return lines;
}

/** The public methods of a class in a file, with their first parameter's type as written. */
function publicMethods(sf: ts.SourceFile, className: string): { name: string; firstParamType: string | null }[] {
  const out: { name: string; firstParamType: string | null }[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isClassDeclaration(n) && n.name?.text === className) {
      for (const m of n.members) {
        if (!ts.isMethodDeclaration(m) || !ts.isIdentifier(m.name)) continue;
        const hidden = ts.getModifiers(m)?.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword);
        if (hidden) continue;
        out.push({ name: m.name.text, firstParamType: m.parameters[0]?.type?.getText(sf) ?? null });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe('the write-transaction token', () => {
  it('is made only by the write queue: no cast to WriteTx anywhere else in src/ (the test proves it sees one)', () => {
    const found = sourceFiles(SRC)
      .filter((f) => f !== MAKER)
      .flatMap((f) => casts(parse(f)).map((line) => `${relative(ROOT, f).split(sep).join('/')}:${line}`));
    expect(found).toEqual([]);
    // The scan itself: the maker's one cast is found, so an empty list above means none, not a blind scan.
    expect(casts(parse(MAKER)).length).toBe(1);
    const forged = ts.createSourceFile('x.ts', 'const t = {} as WriteTx; const u = <WriteTx>{};', ts.ScriptTarget.Latest, true);
    expect(casts(forged)).toHaveLength(2);
  });

  it("every write of the delivery ledger takes it first, except those listed with a transaction of their own", () => {
    const methods = publicMethods(parse(LEDGER), 'DeliveryLedger');
    expect(methods.length).toBeGreaterThan(10);
    const withoutToken = methods.filter((m) => m.firstParamType !== 'WriteTx').map((m) => m.name);
    expect(withoutToken.sort()).toEqual(Object.keys(OWN_TRANSACTION).sort());
    // Those run their transaction themselves: ownTransaction in the body, or one statement.
    const text = readFileSync(LEDGER, 'utf8');
    for (const name of Object.keys(OWN_TRANSACTION)) {
      const body = text.slice(text.indexOf(`  ${name}(`), text.indexOf('\n  }\n', text.indexOf(`  ${name}(`)));
      expect(body.includes('ownTransaction(this.db') || (body.match(/\.run\(/g) ?? []).length === 1, name).toBe(true);
    }
  });
});
