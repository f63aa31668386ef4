// Web mode: the page is opened as /?token=T. The token moves to sessionStorage (so a reload keeps
// working) and out of the address bar (so it is not bookmarked, shared or left in history).

/** Where the token is kept for the tab's lifetime. */
export const TOKEN_KEY = 'webhook-lab.token';

type TokenWindow = Pick<Window, 'location' | 'sessionStorage'>;

/** The token the page was opened with, or the one kept from before; moves nothing. */
export function peekToken(win: TokenWindow = window): string | null {
  return new URL(win.location.href).searchParams.get('token') || win.sessionStorage.getItem(TOKEN_KEY);
}

export function takeToken(win: Pick<Window, 'location' | 'history' | 'sessionStorage'> = window): string | null {
  const url = new URL(win.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    win.sessionStorage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete('token');
    win.history.replaceState(win.history.state, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  return win.sessionStorage.getItem(TOKEN_KEY);
}
