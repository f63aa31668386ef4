// Web mode, opened on the inspector: ask for its first page while the app bundle is still
// downloading and starting, and paint those rows as plain DOM as soon as they arrive.
//
// A second build entry: electron.vite.config.ts bundles this file on its own (an IIFE, minified)
// and inlines it into index.html, allowed by its hash, so it runs with no request of its own before
// the bundle's. The bundle is mostly React, and on a first visit fetching and compiling it takes
// longer than the rows take to arrive. So this file imports only small React-free modules (the
// screen list, the call list's columns, the status chip's words, the formatters, the token's key),
// the same ones the app renders with: the shell it paints cannot drift from the app's.
// tests/unit/renderer-first-page.test.ts keeps it small and free of copies.
//
// - The HTTP transport answers its first listMessages call with this same answer
//   (api/early-request.ts); the URL and headers must be the ones it would send, which
//   tests/unit/renderer-early-request.test.ts checks by running the built script against its code.
// - The painted shell is the app's own markup and classes (App, InspectorScreen, CallList): React's
//   first commit replaces it in one step (createRoot clears its container), rows in the same places.
//   tests/e2e/first-rows.spec.ts holds the bundle back and compares the two, cell by cell.
// - A click on a painted row is kept and opens that call once the app runs (adoptFirstRows).

import type { CallSummary } from '../../shared/types';
import { toHttpRequest } from '../../shared/http-mapping';
import type { EarlyRequest, FirstRows } from '../api/early-request';
import { peekToken } from '../api/token';
import { actionsTagOf, chipMinWidth, chipOf, countdownText, elapsedText, noteText } from '../components/status-chip-model';
import { CALL_COLUMNS, PAGE_SIZE, ROW_HEIGHT, rowStatus } from '../components/call-list-model';
import { APP_NAME, CONNECTION_LABELS, SCREENS, tabFromHash, tabHref } from '../screens';

const onInspector = () => tabFromHash(location.hash) === 'inspector';

function el(tag: string, className?: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text; // call fields are untrusted: text, never HTML
  return node;
}

function start(): void {
  // Desktop app: IPC, no HTTP API.
  if (window.webhookLab || !/^https?:$/.test(location.protocol) || !onInspector()) return;
  const token = peekToken(window);
  if (!token) return;
  // The request listMessages' first load sends (the path is the contract's, which is not imported:
  // it brings zod); renderer-early-request.test.ts holds the two to the same URL and headers.
  // Without the probe's calls, as the Inspector lists them unless asked (inspector.slice.ts listQuery).
  const input = { probe: false, limit: PAGE_SIZE };
  const { url, method } = toHttpRequest({ method: 'GET', path: '/messages' }, input);
  const answer = fetch(url, { method, headers: { Authorization: `Bearer ${token}` }, priority: 'high' }).then(async (res) => ({ status: res.status, body: await res.text() }));
  const early: EarlyRequest = { op: 'listMessages', input, answer };
  window.__webhookLabEarly = early;

  const firstRows: FirstRows = { picked: null, pick: null };
  window.__webhookLabFirstRows = firstRows;
  answer
    .then(({ status, body }) => {
      if (status !== 200) return;
      const paint = () => paintShell((JSON.parse(body) as { items: CallSummary[] }).items, firstRows);
      if (document.getElementById('root')) paint();
      else document.addEventListener('readystatechange', paint, { once: true });
    })
    // Nothing painted then: the app reads the page itself (the transport asks again after a network
    // error) and shows what went wrong.
    .catch(() => {});
}

/** App's shell (sidebar, content) around InspectorScreen's filters bar and CallList, with the first rows in view. */
function paintShell(calls: CallSummary[], firstRows: FirstRows): void {
  const root = document.getElementById('root');
  // React already committed (it was faster), or the user left the inspector meanwhile.
  if (!root || root.firstChild || !onInspector() || !Array.isArray(calls) || calls.length === 0) return;
  const app = el('div', 'app');
  app.dataset.firstRows = '';
  const nav = el('nav', 'sidebar');
  nav.append(el('div', 'brand', APP_NAME));
  for (const { tab, label } of SCREENS) {
    const link = el('a', tab === 'inspector' ? 'active' : '', label) as HTMLAnchorElement;
    link.href = tabHref(tab);
    nav.append(link);
  }
  nav.append(el('span', 'spacer'), el('span', 'conn conn-connecting', CONNECTION_LABELS.connecting));
  const screen = el('div', 'screen inspector-screen');
  const list = el('div', 'call-list');
  list.setAttribute('role', 'grid');
  const head = el('div', 'call-row call-head');
  head.setAttribute('role', 'row');
  for (const col of CALL_COLUMNS) {
    const cell = el('span', col.numeric ? 'num' : '', col.label);
    cell.setAttribute('role', 'columnheader');
    head.append(cell);
  }
  const scroll = el('div', 'call-scroll');
  const inner = el('div');
  inner.style.cssText = `height:${calls.length * ROW_HEIGHT}px;position:relative`;
  const now = Date.now();
  const shown = Math.min(calls.length, Math.ceil(window.innerHeight / ROW_HEIGHT));
  for (let i = 0; i < shown; i++) {
    const slot = el('div');
    slot.style.cssText = `position:absolute;top:0;left:0;right:0;height:${ROW_HEIGHT}px;transform:translateY(${i * ROW_HEIGHT}px)`;
    slot.append(row(calls[i], now, i === 0, firstRows));
    inner.append(slot);
  }
  scroll.append(inner);
  list.append(head, scroll);
  const split = el('div', 'inspector-split');
  split.append(list);
  const filtersHead = el('div', 'inspector-head');
  // An unseen control gives the bar its controls' height, so the rows below do not move.
  const bar = el('div', 'filters-bar');
  const strut = el('input') as HTMLInputElement;
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

/**
 * CallList's Row: its columns' cells, the status cell StatusChip's. The first row is the keyboard
 * cursor's until the keys move it (CallList's roving tabIndex).
 */
function row(call: CallSummary, now: number, cursor: boolean, firstRows: FirstRows): HTMLElement {
  const node = el('div', cursor ? 'call-row cursor' : 'call-row');
  node.tabIndex = cursor ? 0 : -1;
  if (cursor) node.dataset.cursor = 'true';
  node.setAttribute('role', 'row');
  node.setAttribute('aria-selected', 'false');
  node.dataset.testid = 'call-row';
  node.dataset.id = String(call.id);
  node.dataset.status = rowStatus(call);
  for (const col of CALL_COLUMNS) {
    const cell = el('span', col.className, col.text?.(call));
    cell.setAttribute('role', 'gridcell');
    const title = col.title?.(call);
    if (title !== undefined) cell.title = title;
    if (col.testId) cell.dataset.testid = col.testId;
    if (!col.text) cell.append(chip(call, now), ...actionsTag(call));
    node.append(cell);
  }
  node.addEventListener('click', () => {
    for (const other of document.querySelectorAll('[data-first-rows] .call-row.selected')) {
      other.classList.remove('selected');
      other.setAttribute('aria-selected', 'false');
    }
    node.classList.add('selected');
    node.setAttribute('aria-selected', 'true');
    firstRows.picked = call.id;
    firstRows.pick?.(call.id);
  });
  return node;
}

/** StatusChip, its times as they read now (the app's tick them). */
function chip(call: CallSummary, now: number): HTMLElement {
  const c = chipOf(call);
  const node = el('span', c.className);
  node.append(el('span', 'chip-word', c.label));
  node.style.minWidth = chipMinWidth(c);
  if (c.title !== undefined) node.title = c.title;
  node.dataset.status = c.status;
  if (c.since !== null) node.append(el('span', 'elapsed', elapsedText(c.since, now)));
  if (c.retryAt) node.append(el('span', 'countdown', countdownText(c.retryAt, now)));
  if (c.note) {
    const note = el('span', 'url-note', noteText(c.note));
    if (c.noteShort) note.dataset.short = c.noteShort;
    node.append(note);
  }
  return node;
}

/** ActionsTag: none, or the one tag. */
function actionsTag(call: CallSummary): HTMLElement[] {
  const tag = actionsTagOf(call.urls);
  if (!tag) return [];
  const node = el('span', `actions-tag actions-tag-${tag.state}`);
  node.title = tag.title;
  node.dataset.testid = 'actions-tag';
  node.dataset.state = tag.state;
  const long = el('span', 'tag-long', tag.label);
  const short = el('span', 'tag-short', tag.short);
  for (const shown of [long, short]) shown.setAttribute('aria-hidden', 'true');
  node.append(long, short, el('span', 'sr-only', tag.spoken));
  return [node];
}

start();
