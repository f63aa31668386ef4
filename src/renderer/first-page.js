// Web mode, opened on the inspector: ask for its first page while the app bundle is still
// downloading and starting, and paint those rows as plain DOM as soon as they arrive.
//
// - The HTTP transport answers its first listMessages call with this same answer
//   (api/early-request.ts); the URL and headers must be the ones it would send, which
//   tests/unit/renderer-early-request.test.ts checks by running this file against its code.
// - The painted shell is the app's own markup and classes (App, InspectorScreen, CallList): React's
//   first commit replaces it in one step (createRoot clears its container), rows in the same places.
//   tests/e2e/first-rows.spec.ts holds the bundle back and compares the two, cell by cell.
// - A click on a painted row is kept and opens that call once the app runs (adoptFirstRows).
// Plain JS, inlined into index.html by the build (no request of its own, before the bundle's): the
// bundle is mostly React, and on a first visit fetching and compiling it takes longer than the rows
// take to arrive.
(() => {
  if (window.webhookLab || !/^https?:$/.test(location.protocol)) return; // desktop app: IPC, no HTTP API
  const onInspector = () => location.hash.replace(/^#\/?/, '').split(/[/?]/)[0] === 'inspector';
  if (!onInspector()) return;
  const token = new URL(location.href).searchParams.get('token') || sessionStorage.getItem('webhook-lab.token');
  if (!token) return;
  const headers = { Authorization: `Bearer ${token}` };
  const answer = fetch('/api/messages?limit=100', { method: 'GET', headers, priority: 'high' }).then(async (res) => ({ status: res.status, body: await res.text() }));
  window.__webhookLabEarly = { op: 'listMessages', input: { limit: 100 }, answer };

  const firstRows = { picked: null, pick: null };
  window.__webhookLabFirstRows = firstRows;
  answer
    .then(({ status, body }) => {
      if (status !== 200) return;
      const paint = () => paintShell(JSON.parse(body).items);
      if (document.getElementById('root')) paint();
      else document.addEventListener('readystatechange', paint, { once: true });
    })
    // Nothing painted then: the app reads the page itself (the transport asks again after a network
    // error) and shows what went wrong.
    .catch(() => {});

  // Same labels and order as NAV in app.tsx.
  const NAV = [
    ['compose', 'Compose'],
    ['inspector', 'Inspector'],
    ['destinations', 'Destinations'],
    ['receivers', 'Mock receivers'],
    ['audiences', 'Audiences'],
    ['deletions', 'Deletions'],
    ['load', 'Load'],
    ['client', 'Client'],
    ['settings', 'Settings'],
  ];
  const HEAD = ['time', 'source', 'type', 'user', 'event / name', 'status', 'tries', 'latency'];
  const ROW_HEIGHT = 30; // CallList's
  const STATE_LABELS = { pending: 'pending', in_flight: 'in flight', delivered: 'delivered', retrying: 'retrying', failed: 'failed', expired: 'expired', canceled: 'canceled', dropped: 'dropped' };

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text; // call fields are untrusted: text, never HTML
    return node;
  }

  function paintShell(calls) {
    const root = document.getElementById('root');
    // React already committed (it was faster), or the user left the inspector meanwhile.
    if (!root || root.firstChild || !onInspector() || !Array.isArray(calls) || calls.length === 0) return;
    const app = el('div', 'app');
    app.dataset.firstRows = '';
    const nav = el('nav', 'sidebar');
    nav.append(el('div', 'brand', 'Webhook Lab'));
    for (const [tab, label] of NAV) {
      const link = el('a', tab === 'inspector' ? 'active' : '', label);
      link.href = `#/${tab}`;
      nav.append(link);
    }
    nav.append(el('span', 'spacer'), el('span', 'conn conn-connecting', 'connecting…'));
    const screen = el('div', 'screen inspector-screen');
    const list = el('div', 'call-list');
    list.setAttribute('role', 'grid');
    const head = el('div', 'call-row call-head');
    for (const label of HEAD) head.append(el('span', label === 'tries' || label === 'latency' ? 'num' : '', label));
    const scroll = el('div', 'call-scroll');
    const inner = el('div');
    inner.style.cssText = `height:${calls.length * ROW_HEIGHT}px;position:relative`;
    const now = Date.now();
    const shown = Math.min(calls.length, Math.ceil(window.innerHeight / ROW_HEIGHT));
    for (let i = 0; i < shown; i++) {
      const slot = el('div');
      slot.style.cssText = `position:absolute;top:0;left:0;right:0;height:${ROW_HEIGHT}px;transform:translateY(${i * ROW_HEIGHT}px)`;
      slot.append(row(calls[i], now, i === 0));
      inner.append(slot);
    }
    scroll.append(inner);
    list.append(head, scroll);
    const split = el('div', 'inspector-split');
    split.append(list);
    const filtersHead = el('div', 'inspector-head');
    // An unseen control gives the bar its controls' height, so the rows below do not move.
    const bar = el('div', 'filters-bar');
    const strut = el('input');
    strut.type = 'search';
    strut.tabIndex = -1;
    strut.setAttribute('aria-hidden', 'true');
    strut.style.visibility = 'hidden';
    bar.append(strut);
    filtersHead.append(bar);
    screen.append(filtersHead, split);
    const main = el('main', 'content');
    main.append(screen);
    app.append(nav, main);
    root.append(app);
  }

  // CallList's Row, with StatusChip and the formatting of components/format.ts.
  // The first row is the keyboard cursor's until the keys move it (CallList's roving tabIndex).
  function row(call, now, cursor) {
    const status = call.status === 'dropped' ? 'dropped' : call.deliveryState || 'not_forwarded';
    const node = el('div', cursor ? 'call-row cursor' : 'call-row');
    node.tabIndex = cursor ? 0 : -1;
    if (cursor) node.dataset.cursor = 'true';
    node.setAttribute('role', 'row');
    node.setAttribute('aria-selected', 'false');
    node.dataset.testid = 'call-row';
    node.dataset.id = String(call.id);
    node.dataset.status = status;
    const user = el('span', 'ellipsis mono', call.userId ?? (call.anonymousId ? `anon ${call.anonymousId.slice(0, 8)}` : '—'));
    if (call.anonymousId) user.title = call.anonymousId;
    const label = el('span', 'ellipsis', call.label ?? '');
    label.dataset.testid = 'call-label';
    const chipCell = el('span', 'ellipsis');
    chipCell.append(chip(call, now));
    node.append(
      el('span', 'mono', formatTime(call.receivedAt)),
      el('span', 'ellipsis', call.sourceName ?? '—'),
      el('span', '', call.type),
      user,
      label,
      chipCell,
      el('span', 'num', String(call.attemptCount)),
      el('span', 'num', formatMs(call.latencyMs)),
    );
    node.addEventListener('click', () => {
      for (const other of document.querySelectorAll('[data-first-rows] .call-row.selected')) {
        other.classList.remove('selected');
        other.setAttribute('aria-selected', 'false');
      }
      node.classList.add('selected');
      node.setAttribute('aria-selected', 'true');
      firstRows.picked = call.id;
      if (firstRows.pick) firstRows.pick(call.id);
    });
    return node;
  }

  function chip(call, now) {
    if (call.status === 'dropped') {
      const node = el('span', 'chip chip-dropped', call.dropReason ? `dropped: ${call.dropReason}` : 'dropped');
      if (call.dropReason) node.title = call.dropReason;
      node.dataset.status = 'dropped';
      return node;
    }
    const state = call.deliveryState;
    if (!state) {
      const node = el('span', 'chip chip-none', 'not forwarded');
      node.title = "Webhooks is disabled for this source or by the call's integrations";
      node.dataset.status = 'not_forwarded';
      return node;
    }
    // The per-URL outcome as src/shared/url-outcome.ts words it (urlOutcomeNote, deliveredWithFailures, inFlightSince).
    const urls = Array.isArray(call.urls) ? call.urls : [];
    const failed = urls.filter((u) => u.state === 'failed' || u.state === 'expired').length;
    const warn = state === 'delivered' && urls.some((u) => u.state === 'failed' || u.state === 'expired' || u.state === 'retrying');
    const node = el('span', `chip chip-${state}${warn ? ' chip-warn' : ''}`, STATE_LABELS[state] ?? state);
    node.dataset.status = state;
    if (state === 'in_flight') {
      const starts = urls.filter((u) => u.state === 'in_flight' && u.startedAt).map((u) => Date.parse(u.startedAt));
      if (starts.length) node.append(el('span', 'elapsed', ` ${formatDuration(Math.max(0, now - Math.min(...starts)))}`));
    }
    if (state === 'retrying' && call.nextAttemptAt) {
      const left = new Date(call.nextAttemptAt).getTime() - now;
      node.append(el('span', 'countdown', left > 0 ? ` in ${formatDuration(left)}` : ' now'));
    }
    if (failed > 0 && failed < urls.length) node.append(el('span', 'url-note', ` · ${failed} of ${urls.length} URLs failed`));
    return node;
  }

  const pad = (n, width = 2) => String(n).padStart(width, '0');

  function formatTime(iso) {
    if (!iso) return '—';
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  }

  function formatMs(ms) {
    if (ms === null || ms === undefined) return '—';
    return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  }

  function formatDuration(ms) {
    let s = Math.round(Math.abs(ms) / 1000);
    const h = Math.floor(s / 3600);
    s -= h * 3600;
    const m = Math.floor(s / 60);
    s -= m * 60;
    return h ? `${h}h ${pad(m)}m` : m ? `${m}m ${pad(s)}s` : `${s}s`;
  }
})();
