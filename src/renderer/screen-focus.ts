import type { Tab } from './screens';

// Where focus goes after the app moves a person somewhere (issue 40): the command palette closing on a
// screen, an action that opens a call. Left alone it fell to the page's body: keyboard users lost their
// place, and screen readers said nothing. Screens other than the inspector load lazily, so the target
// is looked for over the next frames.

/** Presses and clicks so far: a person who acted after a move is left where they went. */
let inputs = 0;
if (typeof window !== 'undefined') for (const type of ['pointerdown', 'keydown']) window.addEventListener(type, () => inputs++, true);

/**
 * Focuses what `find` returns once it is there (a screen still loading, a call being read), for up to
 * about 5 s, unless the person pressed or clicked something meanwhile.
 */
export function focusWhenThere(find: () => HTMLElement | null, tries = 300, since = inputs): void {
  if (inputs !== since) return;
  const el = find();
  if (el) {
    // A heading is not focusable by itself: made so for a script only (-1 keeps it out of Tab's order).
    if (!el.hasAttribute('tabindex') && !el.matches('a[href], button, input, select, textarea, summary')) el.tabIndex = -1;
    el.focus();
  } else if (tries > 0) requestAnimationFrame(() => focusWhenThere(find, tries - 1, since));
}

/** A screen's place to start: the inspector's current row (where its arrow keys work), else the screen's heading. */
export function screenStart(tab: Tab): HTMLElement | null {
  const root = document.querySelector<HTMLElement>(`[data-testid="screen-${tab}"]`);
  if (!root) return null;
  return root.querySelector<HTMLElement>('[role="row"][tabindex="0"]') ?? root.querySelector<HTMLElement>('h1');
}

/** The heading of call `id`'s detail in the inspector (not the call open before it, still shown while it loads). */
export function detailStart(id: number): () => HTMLElement | null {
  return () => document.querySelector<HTMLElement>(`[data-testid="call-detail"][data-call-id="${id}"] h2`);
}
