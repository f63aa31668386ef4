import type { Tab } from './screens';

// Where focus goes after the app moves a person somewhere (issue 40): the command palette closing on a
// screen, an action that opens a call. Left alone it fell to the page's body: keyboard users lost their
// place, and screen readers said nothing. Screens other than the inspector load lazily, so the target
// is looked for over the next frames.

/** Focuses what `find` returns once it is there (a screen still loading), for up to about a second. */
export function focusWhenThere(find: () => HTMLElement | null, tries = 60): void {
  const el = find();
  if (el) {
    // A heading is not focusable by itself: made so for a script only (-1 keeps it out of Tab's order).
    if (!el.hasAttribute('tabindex') && !el.matches('a[href], button, input, select, textarea, summary')) el.tabIndex = -1;
    el.focus();
  } else if (tries > 0) requestAnimationFrame(() => focusWhenThere(find, tries - 1));
}

/** A screen's place to start: the inspector's current row (where its arrow keys work), else the screen's heading. */
export function screenStart(tab: Tab): HTMLElement | null {
  const root = document.querySelector<HTMLElement>(`[data-testid="screen-${tab}"]`);
  if (!root) return null;
  return root.querySelector<HTMLElement>('[role="row"][tabindex="0"]') ?? root.querySelector<HTMLElement>('h1');
}

/** The open call's heading in the inspector's detail. */
export function detailStart(): HTMLElement | null {
  return document.querySelector<HTMLElement>('[data-testid="call-detail"] h2');
}
