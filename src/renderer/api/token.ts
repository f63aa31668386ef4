// Web mode: the page is opened as /?token=T. The token moves to sessionStorage (so a reload keeps
// working) and out of the address bar (so it is not bookmarked, shared or left in history).

const KEY = 'webhook-lab.token';

export function takeToken(win: Pick<Window, 'location' | 'history' | 'sessionStorage'> = window): string | null {
  const url = new URL(win.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    win.sessionStorage.setItem(KEY, fromUrl);
    url.searchParams.delete('token');
    win.history.replaceState(win.history.state, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  return win.sessionStorage.getItem(KEY);
}
