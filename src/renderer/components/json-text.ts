// JSON typed by a person, read with where it went wrong (line and column): the editors' one reading
// of it (components/json-editor.tsx, Compose's fields, the Webhooks settings' headers).

export interface JsonProblem {
  message: string;
  /** 0-based offset into the text, 1-based line and column. */
  pos: number;
  line: number;
  col: number;
}

export function lineCol(text: string, pos: number): { line: number; col: number } {
  const before = text.slice(0, pos).split('\n');
  return { line: before.length, col: before[before.length - 1].length + 1 };
}

/** JSON.parse's complaint with a position: V8 says "... at position N" (or nothing, at the end). */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; problem: JsonProblem } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    const raw = (err as Error).message;
    const m = /position (\d+)/.exec(raw);
    const pos = m ? Math.min(Number(m[1]), text.length) : text.length;
    const message = raw.replace(/\s*in JSON at position \d+.*$/, '').replace(/^JSON\.parse: /, '') || 'invalid JSON';
    return { ok: false, problem: { message, pos, ...lineCol(text, pos) } };
  }
}
