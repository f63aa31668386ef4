// Text SQLite keeps as it was given. A lone surrogate (an unpaired \uD800–\uDFFF, which JSON's \u
// escapes can carry) is stored as three U+FFFD: a name holding one no longer matches itself once
// stored, so a config applied twice tried to make its source a second time (a review found it).
// Names are refused with it; messageIds are made well-formed instead, as Segment reads them.

export const isWellFormedText = (s: string): boolean => s.isWellFormed();

export const LONE_SURROGATE = { message: 'has a lone surrogate (an unpaired \\uD800-\\uDFFF escape): not text' };
