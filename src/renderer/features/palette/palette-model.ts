// The command palette's matching (pure; tests/unit/palette-model.test.ts). Fuzzy as in VS Code or
// Linear: the query's characters in order anywhere in the title ("gdest" finds "Go to Destinations"),
// ranked by how well they sit: a run of consecutive characters, a word's first letter and the very
// start count most; a contiguous substring always beats a scattered match. Keywords match too, below
// any title match.

export interface PaletteCommand {
  id: string;
  title: string;
  /** Shown on the right; "Go to" for screens, "Action" otherwise. */
  group: string;
  /** Other words that find it (not shown), e.g. "dark light" for Toggle theme. */
  keywords?: string;
  /** A shortcut shown next to it, e.g. "?". */
  hint?: string;
}

/** How well `query` matches `text` (higher is better), or null when its characters are not all there in order. */
export function fuzzyScore(query: string, text: string): number | null {
  const q = query.toLowerCase().replace(/\s+/g, '');
  const t = text.toLowerCase();
  if (q === '') return 0;
  let score = 0;
  let from = 0;
  let prev = -2;
  for (const ch of q) {
    const at = t.indexOf(ch, from);
    if (at < 0) return null;
    if (at === prev + 1) score += 5;
    if (at === 0) score += 8;
    else if (/[\s\-_/.:]/.test(t[at - 1])) score += 4;
    score -= Math.min(at - from, 5) * 0.5;
    prev = at;
    from = at + 1;
  }
  // A contiguous substring of the words typed (spaces kept) ranks above any scattered match.
  const phrase = query.toLowerCase().trim();
  if (phrase && t.includes(phrase)) score += 20 + (t.startsWith(phrase) ? 10 : 0);
  return score - t.length * 0.01;
}

/** Matching commands, best first (ties keep the list's order); all of them, in order, for an empty query. */
export function filterCommands<C extends PaletteCommand>(commands: readonly C[], query: string): C[] {
  if (query.trim() === '') return [...commands];
  const scored: { c: C; score: number; i: number }[] = [];
  commands.forEach((c, i) => {
    const title = fuzzyScore(query, `${c.group === 'Go to' ? 'Go to ' : ''}${c.title}`);
    const keywords = c.keywords ? fuzzyScore(query, c.keywords) : null;
    const score = title ?? (keywords === null ? null : keywords - 50);
    if (score !== null) scored.push({ c, score, i });
  });
  return scored.sort((a, b) => b.score - a.score || a.i - b.i).map((s) => s.c);
}

/** The highlighted row after a key press: wraps at both ends; 0 for an empty list. */
export function moveHighlight(index: number, delta: number, count: number): number {
  if (count === 0) return 0;
  return (((index + delta) % count) + count) % count;
}
