// The inspector's search (`q`), written once: the database stores searchText() per call and looks
// for searchTerm(q) in it (calls.repo.ts), and the renderer's live merge runs matchesSearch() on the
// summaries that events bring (inspector-merge.ts), so a call shown live is the call a reload shows.
// No Node, no DOM: the engine also registers searchText as an SQL function for its migration.

/** The call's fields searched, in the order searchText() joins them. `label` is track's event or page/screen's name. */
export const SEARCH_FIELDS = ['userId', 'anonymousId', 'messageId', 'label', 'groupId', 'previousId'] as const;

export type SearchFields = { [K in (typeof SEARCH_FIELDS)[number]]?: string | null };

/**
 * Case-insensitive means: both sides lowercased by JavaScript's toLowerCase (Unicode, locale-free).
 * A lone surrogate becomes U+FFFD, as it is in whatever the database stores (UTF-8 has none), so a
 * body read behind the index matches as the index does.
 */
export function foldCase(s: string): string {
  return s.toLowerCase().toWellFormed();
}

/** What `q` searches for: trimmed and folded; null when there is nothing to search (no filter). */
export function searchTerm(q: string | null | undefined): string | null {
  const t = q?.trim();
  return t ? foldCase(t) : null;
}

/**
 * A call's searchable text: its fields that are set, folded, one per line. A term matches when it is
 * a substring of this text (so, in practice, of one field: a term with a line break is the only way
 * to span two).
 */
export function searchText(c: SearchFields): string {
  let out = '';
  for (const k of SEARCH_FIELDS) {
    const v = c[k];
    if (v != null && v !== '') out += out ? `\n${v}` : v;
  }
  return foldCase(out);
}

/** term: from searchTerm(). */
export function matchesSearch(c: SearchFields, term: string): boolean {
  return searchText(c).includes(term);
}

/**
 * "Search bodies" (`body=1`) also matches a call whose JSON as received holds the term inside one of
 * its keys or string values, folded the same way. The call's JSON is its own item: for a call sent in
 * a batch, that batch item, not its neighbours or the batch envelope. Numbers, booleans and the JSON
 * punctuation are not searched (a number's text depends on how the sender wrote it). A body that was
 * not JSON is searched as one string.
 */
export function bodyMatches(item: unknown, term: string): boolean {
  return someBodyText(item, (text) => foldCase(text).includes(term));
}

/**
 * Visits the keys and string values of an item in document order (a key before its value) until
 * `found` says yes. Iterative: a call may be stored nested 100,000 levels deep (as dropped), where a
 * recursive walk overflows the stack.
 */
function someBodyText(item: unknown, found: (text: string) => boolean): boolean {
  const stack: unknown[] = [item];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (found(v)) return true;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v);
      // A key is a string too: pushed after its value, so it comes off the stack first.
      for (let i = entries.length - 1; i >= 0; i--) stack.push(entries[i]![1], entries[i]![0]);
    }
  }
  return false;
}

/**
 * The text bodyMatches() searches in an item, for the engine's body index (store/body-search.ts): each
 * key and string value folded, one per line, in the order bodyMatches() visits them. A term without
 * a line break or U+0000 is a substring of this text exactly when bodyMatches() finds it in the item.
 * U+0000 becomes a line break: FTS5's trigram tokenizer skips it, so `foobar` matched `foo\u0000bar`.
 */
export function bodySearchText(item: unknown): string {
  const parts: string[] = [];
  someBodyText(item, (text) => (parts.push(foldCase(text).replaceAll('\0', '\n')), false));
  return parts.join('\n');
}

/**
 * A cheap test on a request body's text that never misses a body bodyMatches() would match (it may
 * pass bodies that do not): a key or string value appears in the JSON text verbatim unless written
 * with an escape, and folding it folds the same characters in the text.
 */
export function bodyMayMatch(text: string, term: string): boolean {
  return text.includes('\\') || foldCase(text).includes(term);
}
