import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { firstPageScript } from '../../electron.vite.config';
import { TOKEN_KEY } from '../../src/renderer/api/token';
import { NOT_FORWARDED_TITLE } from '../../src/renderer/components/status-chip-model';
import { CALL_COLUMNS, PAGE_SIZE, ROW_HEIGHT } from '../../src/renderer/components/call-list-model';
import { APP_NAME, CONNECTION_LABELS, SCREENS } from '../../src/renderer/screens';
import { STATE_LABELS } from '../../src/shared/url-outcome';

// The script inlined into index.html to paint the inspector's first rows before the app runs is
// built from the app's own modules (electron.vite.config.ts, firstPageScript): the words and sizes it
// paints are the ones the app exports, and src/renderer holds no second copy of them.

const RENDERER = resolve(__dirname, '../../src/renderer');
let built = '';
beforeAll(async () => {
  built = await firstPageScript();
});

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : [join(dir, e.name)]));
}

describe('the first page script', () => {
  it('paints with the app’s declarations: screens, columns, chip words, token key, page size, row height', () => {
    const texts = [
      APP_NAME,
      CONNECTION_LABELS.connecting,
      ...SCREENS.map((s) => s.label),
      ...CALL_COLUMNS.map((c) => c.label),
      ...Object.values(STATE_LABELS),
      NOT_FORWARDED_TITLE,
      TOKEN_KEY,
    ];
    for (const text of texts) expect(built, text).toContain(text);
    // Numbers are folded into the code by the minifier: as the limit it asks for, and the rows' slots.
    expect(built).toContain(`limit:${PAGE_SIZE}`);
    expect(built).toContain(`height:${ROW_HEIGHT}px`);
  });

  it('stays small: none of React, zod or the app comes with it', () => {
    // 9 KB: the limit guards against a library creeping in (React alone is over 100 KB), not against
    // a screen or a status word more; with ten screens and the blocked status it is 8.2 KB.
    expect(Buffer.byteLength(built)).toBeLessThan(9 * 1024);
    expect(built).not.toMatch(/react|zod|zustand/i);
    expect(built).not.toContain('</script');
  });

  it('has no hand-written copy in src/renderer: each text is declared in one module', () => {
    // Only the source files the renderer's two entries are built from: no plain .js beside them
    // (first-page.js was such a copy).
    const files = sources(RENDERER).filter((f) => /\.(ts|tsx|js|jsx|mjs)$/.test(f));
    expect(files.filter((f) => !/\.tsx?$/.test(f)).map((f) => relative(RENDERER, f))).toEqual([]);
    const literal = (text: string) => new RegExp(`(['"\`])${text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\1`);
    const owners = (text: string) =>
      files.filter((f) => literal(text).test(readFileSync(f, 'utf8'))).map((f) => relative(RENDERER, f).replaceAll('\\', '/'));
    const declared: [string, string][] = [
      [APP_NAME, 'screens.ts'],
      ...Object.values(CONNECTION_LABELS).map((l): [string, string] => [l, 'screens.ts']),
      ...SCREENS.map((s): [string, string] => [s.label, 'screens.ts']),
      ...CALL_COLUMNS.filter((c) => c.label.length > 6).map((c): [string, string] => [c.label, 'components/call-list-model.ts']),
      [NOT_FORWARDED_TITLE, 'components/status-chip-model.ts'],
      ['not forwarded', 'components/status-chip-model.ts'],
      [TOKEN_KEY, 'api/token.ts'],
    ];
    for (const [text, home] of declared) expect(owners(text), text).toEqual([home]);
    // The state labels live in src/shared (url-outcome.ts), so in no renderer file.
    for (const label of Object.values(STATE_LABELS).filter((l) => l.includes(' '))) expect(owners(label), label).toEqual([]);
  });
});
