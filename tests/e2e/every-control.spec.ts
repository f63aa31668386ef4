import type { Locator, Page } from '@playwright/test';
import { expect, ownLab, test } from './lab-fixture';
import { openApp, expectCopied, row } from './ui-steps';
import { writeFileSync } from 'node:fs';

// Every button, select, checkbox, radio and menu item of every screen is used at least once, the
// destructive ones included, and what each did is asserted. The controls on screen are enumerated as
// the test goes (after every action); one that is not in COVERED fails the test, so a control added
// later fails here until a step exercises it. A control is named by its data-testid, else its
// aria-label, else (copy buttons) its copy label, else (a <summary>) the test id of its <details>.
// The audience rule builder's paths are indexed (rule.conditions[1].conditions[0]): the index and the
// depth are dropped from the name (rule.conditions[i]), so one nested group stands for all of them;
// a source id at the end of a name reads <source>.

const COVERED: Record<string, string[]> = {
  // Everything outside the screens: the sidebar's tools, the first-run offer and demo bar, the
  // command palette and the shortcuts help.
  shell: ['open-palette', 'open-help', 'help-close', 'demo-try', 'demo-open-call', 'demo-remove', 'leave-keep', 'leave-discard'],
  compose: [
    'template-select', 'compose-source', 'type-identify', 'type-track', 'type-page', 'type-screen', 'type-group', 'type-alias',
    'ts-now', 'ts-historical', 'queue-button', 'send-button', 'preview-raw-toggle',
    'preview-webhook-copy', 'preview-http-copy', 'preview-go-copy', 'preview-actions-0-copy',
  ],
  destinations: [
    'source-item', 'create-source', 'copy-write-key', 'regenerate-key', 'regenerate-key-cancel', 'regenerate-key-confirm',
    'delete-source', 'delete-source-cancel', 'delete-source-confirm', 'wh-enabled', 'wh-add-url', 'wh-url-remove-0', 'wh-url-remove-1',
    'wh-headers-0-add', 'wh-headers-0-remove-0', 'wh-headers-1-add', 'wh-headers-1-remove-0', 'wh-secret-toggle', 'wh-secret-generate', 'wh-secret-copy', 'wh-sw-copy', 'wh-save', 'send-test-call', 'check-receiver',
    'cf-enabled', 'cf-mode', 'cf-save',
    'wh-mode', 'wh-add-mapping', 'am-type-0-op', 'am-event-0-op', 'am-method-0', 'am-headers-0-add', 'am-headers-0-remove-0', 'am-batch-0',
    'am-remove-0', 'wh-sw-generate', 'wh-sw-toggle', 'am-fql-edit-0', 'am-fql-sample-0',
    'rotate-sw-secret', 'rotate-sw-secret-cancel', 'rotate-sw-secret-copy', 'rotate-sw-secret-confirm', 'rotate-sw-secret-now',
    'rotate-shared-secret', 'rotate-shared-secret-cancel', 'rotate-shared-secret-copy', 'rotate-shared-secret-confirm',
  ],
  inspector: [
    'filter-status', 'filter-type', 'filter-source', 'pause-button', 'inspector-time-warp-1', 'inspector-time-warp-10',
    'inspector-time-warp-100', 'inspector-time-warp-1000', 'inspector-time-warp-apply', 'export-menu-toggle', 'export-jsonl', 'export-har', 'button:Clear filters', 'filter-url-state', 'filter-search-bodies', 'filter-violations',
    'Close detail', 'replay-button', 'replay-url', 'copy-body', 'copy-curl', 'summary:attempt', 'toggle-raw', 'verify-button',
    'copy:Copy as cURL', 'edit-replay', 'edit-replay-cancel', 'edit-replay-send', 'attempt-copy-edited',
    'retry-matching', 'retry-matching-cancel', 'retry-matching-confirm', 'clear-calls', 'clear-calls-cancel', 'clear-calls-confirm',
    'copy:Copy', 'verify-sw-button', 'batch-member-link', 'batch-delivery-link',
    'picks-draft', 'picks-draft-cancel', 'picks-recheck', 'picks-draft-confirm', 'picks-clear', 'search-bodies', 'verify-secret-source', 'verify-sw-secret-source',
    'open-export', 'export-view-back',
  ],
  receivers: [
    'receivers-time-warp-1', 'receivers-time-warp-10', 'receivers-time-warp-100', 'receivers-time-warp-1000', 'receivers-time-warp-apply', 'new-receiver',
    'rf-tls', 'rf-ending', 'rf-delay-mode', 'receiver-save', 'receiver-cancel', 'receiver-row-copy', 'attach-source', 'attach-button',
    'edit-receiver', 'copy-receiver-url', 'reset-receiver', 'reset-receiver-cancel', 'reset-receiver-confirm', 'delete-receiver',
    'delete-receiver-cancel', 'delete-receiver-confirm', 'delete-receiver-detach', 'receiver-requests-reload', 'rf-headers-add', 'rf-headers-remove-0',
    'rf-enforce-signature', 'rf-reject-duplicates',
  ],
  probe: ['probe-mode', 'probe-copy-ci', 'probe-run', 'summary:probe-check'],
  audiences: [
    'new-audience', 'aud-type', 'aud-compute-kind', 'combine-rule-and', 'combine-rule-or', 'add-trait-rule', 'add-event-rule',
    'add-group-rule', 'cond-rule.conditions[i]-op', 'Remove condition', 'remove-group-rule.conditions[i]', 'aud-source-keep',
    'combine-rule.conditions[i]-and', 'combine-rule.conditions[i]-or', 'add-trait-rule.conditions[i]', 'add-event-rule.conditions[i]',
    'add-group-rule.conditions[i]',
    'aud-preview', 'aud-save', 'aud-cancel', 'audience-sync', 'audience-delete', 'audience-delete-cancel', 'audience-delete-confirm',
    'audience-edit', 'audience-members-toggle',
  ],
  plans: [
    'plans-import', 'plans-import-replace', 'plans-draft-source', 'plans-draft', 'rule-edit', 'rule-save', 'rule-cancel', 'plan-delete', 'plan-delete-cancel', 'plan-delete-confirm',
    'plan-connect-source', 'plan-connect-events', 'plan-connect-properties', 'plan-connect-violations', 'plan-connect', 'plan-disconnect',
    'plan-rules-toggle', 'plans-import-name-submit', 'plans-import-name-cancel', 'plan-show-blocked',
  ],
  deletions: ['deletion-purge', 'deletion-submit', 'deletion-purge-cancel', 'deletion-purge-confirm'],
  load: ['load-stop-by', 'load-template', 'load-source', 'load-random-users', 'load-start', 'load-stop', 'load-template-toggle'],
  client: ['client-flush', 'client-apply', 'sdk-copy-snippet-<source>', 'sdk-copy-cdnurl-<source>', 'sdk-metrics-refresh'],
  settings: [
    'settings-time-warp-1', 'settings-time-warp-10', 'settings-time-warp-100', 'settings-time-warp-1000', 'settings-time-warp-apply', 'set-payload-format',
    'set-preset', 'set-strict', 'set-alias-keys', 'settings-save', 'config-export', 'config-import', 'set-theme',
  ],
};

test.describe.configure({ mode: 'serial' });

const lab = ownLab();


/** Names of the visible controls inside the screen. */
async function controlsOn(page: Page, screen: string): Promise<string[]> {
  const root = screen === 'shell' ? page.locator('.app') : page.getByTestId(`screen-${screen}`);
  return root.evaluate((root, shell) =>
    [...root.querySelectorAll('button, select, summary, input[type="checkbox"], input[type="radio"], [role="menuitem"]')]
      .filter((el) => el.getClientRects().length > 0 && (!shell || !el.closest('.screen')))
      .map((el) => {
        const id = el.getAttribute('data-testid') ?? el.getAttribute('aria-label');
        if (id) return id;
        if (el.getAttribute('data-copy-label')) return `copy:${el.getAttribute('data-copy-label')}`;
        if (el.tagName === 'SUMMARY') return `summary:${el.closest('[data-testid]')?.getAttribute('data-testid') ?? ''}`;
        return `${el.tagName.toLowerCase()}:${(el.textContent ?? '').trim()}`;
      }),
    screen === 'shell',
  );
}

function name(id: string): string {
  return id.replace(/(\.conditions\[\d+\])+/g, '.conditions[i]').replace(/-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, '-<source>');
}

class Screen {
  readonly seen = new Set<string>();
  readonly used = new Set<string>();
  constructor(
    readonly page: Page,
    readonly name: string,
  ) {}
  async look(): Promise<void> {
    for (const id of await controlsOn(this.page, this.name)) this.seen.add(name(id));
  }
  /** Use a control (click, or a callback for selects and the like), then enumerate the screen again. */
  async use(id: string, target: Locator, act: (l: Locator) => Promise<unknown> = (l) => l.click()): Promise<void> {
    await this.look();
    await act(target);
    this.used.add(id);
    await this.look();
  }
  done(): void {
    const covered = COVERED[this.name];
    expect([...this.seen].filter((id) => !covered.includes(id)), `controls on ${this.name} no step uses`).toEqual([]);
    expect(covered.filter((id) => !this.used.has(id)), `controls of ${this.name} never used`).toEqual([]);
  }
}

interface SourceView {
  id: string;
  name: string;
  writeKey: string;
  webhooks: { enabled: boolean; sharedSecret?: string; urls: { url: string }[] };
  collectorFaults: Record<string, unknown> | null;
}

test('shell: first run, demo bar, palette and help: every control', async ({ page, consoleGuard }) => {
  // Remove demo deletes the demo call open in the inspector: the detail reads it again (404) and says
  // it no longer exists.
  consoleGuard.allow(/status of 404 .*\/api\/messages\/\d+\)$/);
  await openApp(page, lab, 'compose');
  const s = new Screen(page, 'shell');
  const t = (id: string) => page.getByTestId(id);

  await s.use('open-help', t('open-help'));
  await expect(t('help-overlay')).toContainText('Ctrl+K');
  await s.use('help-close', t('help-close'));
  await expect(t('help-overlay')).toHaveCount(0);
  await s.use('open-palette', t('open-palette'));
  await expect(t('palette-input')).toBeFocused();
  await t('palette-input').fill('load');
  await page.keyboard.press('Enter');
  await expect(t('palette')).toHaveCount(0);
  await expect(t('screen-load')).toBeVisible();

  // An empty lab offers the demo; it opens its call in the inspector.
  await s.use('demo-try', t('demo-try'));
  await expect(t('screen-inspector')).toBeVisible();
  await expect(t('call-detail')).toBeVisible();
  await expect(t('url-state').first()).toHaveAttribute('data-state', 'delivered');
  await expect(t('demo-bar')).toContainText('Demo source');
  await t('nav-compose').click();
  await s.use('demo-open-call', t('demo-open-call'));
  await expect(t('call-detail')).toBeVisible();
  await s.use('demo-remove', t('demo-remove'));
  await expect(t('demo-bar')).toHaveCount(0);
  await expect(t('first-run')).toBeVisible();
  await expect.poll(async () => (await lab.api<unknown[]>('GET', '/sources')).length).toBe(0);
  expect(await lab.api<unknown[]>('GET', '/receivers')).toEqual([]);

  // The unsaved-changes question (LeaveDialog): leaving an edited form asks; Keep editing, then Discard.
  const source = await lab.api<{ id: string }>('POST', '/sources', { name: 'leave-shell' });
  await t('nav-destinations').click();
  await page.getByTestId('source-item').filter({ hasText: 'leave-shell' }).click();
  await t('wh-secret').fill('not saved');
  await t('nav-compose').click();
  await expect(t('leave-dialog')).toContainText('leave-shell');
  await s.use('leave-keep', t('leave-keep'));
  await expect(t('leave-dialog')).toHaveCount(0);
  await expect(t('wh-secret')).toHaveValue('not saved');
  await t('nav-compose').click();
  await s.use('leave-discard', t('leave-discard'));
  await expect(t('screen-compose')).toBeVisible();
  await lab.api('DELETE', `/sources/${source.id}`);
  s.done();
});

test('destinations: every control', async ({ page, receivers, consoleGuard }) => {
  await openApp(page, lab, 'destinations');
  const s = new Screen(page, 'destinations');
  const t = (id: string) => page.getByTestId(id);
  await t('new-source-name').fill('keep');
  await s.use('create-source', t('create-source'));
  await expect(t('source-panel').locator('h2')).toHaveText('keep');
  await t('new-source-name').fill('doomed');
  await t('create-source').click();
  await expect(t('source-panel').locator('h2')).toHaveText('doomed');
  await s.use('source-item', t('source-item').filter({ hasText: 'keep' }));
  await expect(t('source-panel').locator('h2')).toHaveText('keep');

  await s.use('copy-write-key', t('copy-write-key'));
  await expectCopied(t('copy-write-key'));
  const before = (await t('write-key').textContent())!;
  await s.use('regenerate-key', t('regenerate-key'));
  await s.use('regenerate-key-cancel', t('regenerate-key-cancel'));
  await expect(t('write-key')).toHaveText(before);
  await t('regenerate-key').click();
  await s.use('regenerate-key-confirm', t('regenerate-key-confirm'));
  await expect(t('toast-info').filter({ hasText: 'New write key generated' })).toBeVisible();
  await expect(t('write-key')).not.toHaveText(before);

  await s.use('wh-add-url', t('wh-add-url'));
  await expect(t('wh-enabled')).toBeChecked();
  await t('wh-url-0').fill(`${receivers.ok.url}/every`);
  await t('wh-add-url').click();
  await t('wh-url-1').fill(`${receivers.ok.url}/dropped`);
  await s.use('wh-headers-1-add', t('wh-headers-1-add'));
  await expect(t('wh-headers-1-name-0')).toBeVisible();
  await s.use('wh-headers-1-remove-0', t('wh-headers-1-remove-0'));
  await expect(t('wh-headers-1-name-0')).toHaveCount(0);
  await s.use('wh-url-remove-1', t('wh-url-remove-1'));
  await expect(t('wh-url-1')).toHaveCount(0);
  await s.use('wh-headers-0-add', t('wh-headers-0-add'));
  await s.use('wh-headers-0-remove-0', t('wh-headers-0-remove-0'));
  await expect(t('wh-headers-0-name-0')).toHaveCount(0);
  await s.use('wh-enabled', t('wh-enabled'));
  await expect(t('wh-off-warning')).toBeVisible();
  await t('wh-enabled').check();
  await s.use('wh-secret-generate', t('wh-secret-generate'));
  await expect(t('wh-secret')).toHaveValue(/^[0-9a-f]{48}$/);
  await expect(t('wh-secret')).toHaveAttribute('type', 'text');
  await s.use('wh-secret-toggle', t('wh-secret-toggle'));
  await expect(t('wh-secret')).toHaveAttribute('type', 'password');
  await s.use('wh-secret-copy', t('wh-secret-copy'));
  await expectCopied(t('wh-secret-copy'));
  await s.use('wh-save', t('wh-save'));
  await expect(t('toast-info').filter({ hasText: 'Webhooks settings saved' }).first()).toBeVisible();
  await expect.poll(async () => (await lab.api<SourceView[]>('GET', '/sources')).find((x) => x.name === 'keep')?.webhooks.urls.map((u) => u.url)).toEqual([`${receivers.ok.url}/every`]);

  await s.use('send-test-call', t('send-test-call'));
  await expect(t('test-call-result').locator('.chip')).toHaveAttribute('data-status', 'delivered');
  // The source's first URL and secret, in Check a receiver (nothing is sent until Run checks).
  await s.use('check-receiver', t('check-receiver'), async (l) => {
    await l.click();
    await expect(t('screen-probe')).toBeVisible();
    await expect(t('probe-url')).toHaveValue(`${receivers.ok.url}/every`);
    await t('nav-destinations').click();
    await expect(t('screen-destinations')).toBeVisible();
  });
  // A second URL on the saved source, then removed and saved: wh-url-remove-0 of an existing row.
  await t('wh-add-url').click();
  await t('wh-url-1').fill(`${receivers.failing.url}/gone`);
  await t('wh-save').click();
  await expect.poll(async () => (await lab.api<SourceView[]>('GET', '/sources')).find((x) => x.name === 'keep')?.webhooks.urls.length).toBe(2);
  await s.use('wh-url-remove-0', t('wh-url-remove-0'));
  await t('wh-save').click();
  await expect.poll(async () => (await lab.api<SourceView[]>('GET', '/sources')).find((x) => x.name === 'keep')?.webhooks.urls.map((u) => u.url)).toEqual([`${receivers.failing.url}/gone`]);
  await t('wh-url-0').fill(`${receivers.ok.url}/every`);
  await t('wh-save').click();
  await expect.poll(async () => (await lab.api<SourceView[]>('GET', '/sources')).find((x) => x.name === 'keep')?.webhooks.urls.map((u) => u.url)).toEqual([`${receivers.ok.url}/every`]);

  // Collector faults: every request refused 503 with Retry-After, saved; a call with the key is refused
  // and counted in the panel; a bad rate is named on its field; then off again.
  const faultsOf = async () => (await lab.api<SourceView[]>('GET', '/sources')).find((x) => x.name === 'keep')?.collectorFaults;
  await s.use('cf-enabled', t('cf-enabled'));
  await t('cf-rate').fill('1');
  await s.use('cf-mode', t('cf-mode'), (l) => l.selectOption('delay'));
  await expect(t('cf-delay')).toHaveValue('2000');
  await t('cf-mode').selectOption('status');
  await t('cf-status').fill('503');
  await t('cf-retry-after').fill('2');
  await t('cf-seed').fill('7');
  await s.use('cf-save', t('cf-save'));
  await expect.poll(faultsOf).toEqual({ rate: 1, mode: 'status', status: 503, retryAfterS: 2, seed: 7 });
  const refused = await fetch(`${lab.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${(await t('write-key').textContent())!}:`).toString('base64')}` },
    body: JSON.stringify({ userId: 'u', event: 'Refused' }),
  });
  expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, '2']);
  await expect(t('cf-counts')).toHaveText('refused by fault injection: 503 ×1');
  consoleGuard.allow(/status of 400 \(Bad Request\) \(.*\/api\/sources\//);
  await t('cf-rate').fill('2');
  await t('cf-save').click();
  await expect(t('error-collectorFaults.rate')).toHaveText('must be between 0 and 1');
  await t('cf-enabled').uncheck();
  await t('cf-save').click();
  await expect.poll(faultsOf).toBeNull();

  // Webhooks (Actions): Both mode with one mapping, every control of it, saved; then back to Classic.
  const webhooksOf = async () => (await lab.api<SourceView[]>('GET', '/sources')).find((x) => x.name === 'keep')!.webhooks as Record<string, unknown>;
  await s.use('wh-mode', t('wh-mode'), (l) => l.selectOption('both'));
  await expect(t('am-list')).toBeVisible();
  await s.use('wh-add-mapping', t('wh-add-mapping'));
  await expect(t('am-name-0')).toHaveValue('mapping 1');
  // Its default name is said once (it read "Mapping 1: mapping 1"); a name of its own follows the number.
  await expect(t('am-0').locator('legend')).toHaveText('Mapping 1');
  await t('am-name-0').fill('orders');
  await expect(t('am-0').locator('legend')).toHaveText('Mapping 1: orders');
  await t('am-name-0').fill('mapping 1');
  await s.use('am-type-0-op', t('am-type-0-op'), (l) => l.selectOption('oneOf'));
  await t('am-type-0').fill('track, page');
  await s.use('am-event-0-op', t('am-event-0-op'), (l) => l.selectOption('equals'));
  await t('am-event-0').fill('Every Control');
  await s.use('am-method-0', t('am-method-0'), (l) => l.selectOption('PATCH'));
  await t('am-url-0').fill(`${receivers.ok.url}/actions`);
  await expect(t('am-url-warning-0')).toContainText("Segment could not reach this URL from its cloud");
  await s.use('am-headers-0-add', t('am-headers-0-add'));
  await expect(t('am-headers-0-name-0')).toBeVisible();
  await s.use('am-headers-0-remove-0', t('am-headers-0-remove-0'));
  await expect(t('am-headers-0-name-0')).toHaveCount(0);
  await s.use('am-batch-0', t('am-batch-0'), (l) => l.check());
  await expect(t('am-batch-size-0')).toHaveValue('1000');
  await s.use('wh-sw-generate', t('wh-sw-generate'));
  await expect(t('wh-sw-secret')).toHaveValue(/^whsec_/);
  await expect(t('wh-sw-secret')).toHaveAttribute('type', 'text');
  await s.use('wh-sw-toggle', t('wh-sw-toggle'));
  await expect(t('wh-sw-secret')).toHaveAttribute('type', 'password');
  await s.use('wh-sw-copy', t('wh-sw-copy'));
  await expectCopied(t('wh-sw-copy'));
  await t('wh-save').click();
  await expect
    .poll(async () => (await webhooksOf()).mappings)
    .toEqual([{ name: 'mapping 1', trigger: { type: { oneOf: ['track', 'page'] }, event: { equals: 'Every Control' } }, url: `${receivers.ok.url}/actions`, method: 'PATCH', headers: {}, batchSize: 1000 }]);
  expect((await webhooksOf()).mode).toBe('both');
  // Rotate each saved secret: Rotate… says what happens to a receiver holding the current one and
  // proposes the new secret, to copy before confirming.
  const saved = await webhooksOf();
  await expect(t('rotate-sw-secret-version')).toHaveText('version 1');
  await s.use('rotate-sw-secret', t('rotate-sw-secret'));
  await expect(t('rotate-sw-secret-effect')).toHaveText(
    'For 24h 00m after the rotation, webhook-signature carries two signatures, the new secret’s and the current one’s: a receiver holding either accepts the request. After that, only the new secret signs. Requests already made keep their version, retries included.',
  );
  await expect(t('rotate-sw-secret-value')).toHaveValue(/^whsec_[A-Za-z0-9+/]{43}=$/);
  await s.use('rotate-sw-secret-cancel', t('rotate-sw-secret-cancel'));
  await expect(t('rotate-sw-secret-panel')).toHaveCount(0);
  await expect(t('rotate-sw-secret-version')).toHaveText('version 1');
  await t('rotate-sw-secret').click();
  const proposed = await t('rotate-sw-secret-value').inputValue();
  await s.use('rotate-sw-secret-copy', t('rotate-sw-secret-copy'));
  await expectCopied(t('rotate-sw-secret-copy'));
  await expect(t('rotate-sw-secret-confirm')).toHaveText('Rotate (both sign for 24h 00m)');
  await s.use('rotate-sw-secret-confirm', t('rotate-sw-secret-confirm'));
  await expect(t('rotate-sw-secret-version')).toHaveText('version 2');
  await expect(t('rotate-sw-secret-overlap')).toContainText('the previous version also signs until');
  await expect.poll(async () => (await webhooksOf()).standardWebhooksSecret).toBe(proposed);
  expect(proposed).not.toBe(saved.standardWebhooksSecret);
  // A leaked secret: no overlap, the old version stops at once.
  await t('rotate-sw-secret').click();
  await s.use('rotate-sw-secret-now', t('rotate-sw-secret-now'));
  await expect(t('rotate-sw-secret-version')).toHaveText('version 3');
  await expect(t('rotate-sw-secret-overlap')).toHaveCount(0);
  await expect(t('wh-sw-secret')).toHaveValue((await webhooksOf()).standardWebhooksSecret as string);
  await s.use('rotate-shared-secret', t('rotate-shared-secret'));
  await expect(t('rotate-shared-secret-effect')).toContainText('X-Signature carries one signature, so there is no overlap: from the moment you rotate, new requests are signed with the new secret only');
  await expect(t('rotate-shared-secret-first')).toContainText('First make your receiver accept a signature made with either secret');
  await s.use('rotate-shared-secret-cancel', t('rotate-shared-secret-cancel'));
  await t('rotate-shared-secret').click();
  await s.use('rotate-shared-secret-copy', t('rotate-shared-secret-copy'));
  await expect(t('rotate-shared-secret-confirm')).toHaveText('Rotate now: new requests sign with it');
  await s.use('rotate-shared-secret-confirm', t('rotate-shared-secret-confirm'));
  await expect(t('rotate-shared-secret-version')).toHaveText('version 2');
  await expect(t('toast-info').filter({ hasText: 'Shared secret rotated (version 2)' })).toBeVisible();
  await expect.poll(async () => (await webhooksOf()).sharedSecret).not.toBe(saved.sharedSecret);
  // The trigger as FQL, checked against a sample call as it is typed (the mapping is removed next, unsaved).
  await expect(t('am-trigger-fql-0')).toContainText('(type = "track" or type = "page") and event = "Every Control"');
  await s.use('am-fql-edit-0', t('am-fql-edit-0'));
  await expect(t('am-fql-0')).toHaveValue('(type = "track" or type = "page") and event = "Every Control"');
  await expect(t('am-fql-match-0')).toContainText('does not match this sample call');
  await s.use('am-fql-sample-0', t('am-fql-sample-0'), (l) => l.selectOption({ index: 1 }));
  await expect(t('am-fql-match-0')).toContainText('this sample call');
  await s.use('am-remove-0', t('am-remove-0'));
  await expect(t('am-name-0')).toHaveCount(0);
  await t('wh-mode').selectOption('classic');
  await t('wh-sw-secret').fill('');
  await t('wh-save').click();
  await expect.poll(async () => Object.keys(await webhooksOf()).sort()).toEqual(['enabled', 'sharedSecret', 'urls']);

  await t('source-item').filter({ hasText: 'doomed' }).click();
  await expect(t('source-panel').locator('h2')).toHaveText('doomed');
  await s.use('delete-source', t('delete-source'));
  await s.use('delete-source-cancel', t('delete-source-cancel'));
  await expect(t('source-item').filter({ hasText: 'doomed' })).toHaveCount(1);
  await t('delete-source').click();
  await s.use('delete-source-confirm', t('delete-source-confirm'));
  await expect(t('source-item').filter({ hasText: 'doomed' })).toHaveCount(0);
  await expect.poll(async () => (await lab.api<SourceView[]>('GET', '/sources')).map((x) => x.name)).toEqual(['keep']);
  s.done();
});

test('compose: every control', async ({ page }) => {
  await openApp(page, lab, 'compose');
  const s = new Screen(page, 'compose');
  const t = (id: string) => page.getByTestId(id);
  await s.use('compose-source', t('compose-source'), (l) => l.selectOption({ label: 'keep' }));
  await expect(t('compose-source').locator('option:checked')).toHaveText('keep');
  for (const type of ['identify', 'page', 'screen', 'group', 'alias', 'track']) {
    await s.use(`type-${type}`, t(`type-${type}`));
    await expect(t(`type-${type}`)).toHaveAttribute('aria-selected', 'true');
  }
  await s.use('template-select', t('template-select'), (l) => l.selectOption('order-completed'));
  await expect(t('field-event')).toHaveValue('Order Completed');
  await t('field-userId').fill('every_user');
  await s.use('ts-historical', t('ts-historical'));
  await expect(t('field-timestamp')).toBeVisible();
  await s.use('ts-now', t('ts-now'));
  await expect(t('field-timestamp')).toHaveCount(0);
  for (const id of ['preview-webhook-copy', 'preview-http-copy', 'preview-go-copy']) {
    await s.use(id, t(id));
    await expectCopied(t(id));
  }
  await s.use('preview-raw-toggle', t('preview-raw-toggle'));
  await expect(t('preview-webhook-raw')).toBeVisible();
  // A source in Both mode previews its Actions request beside the Classic one; copied, then back to keep.
  const both = await lab.api<SourceView>('POST', '/sources', {
    name: 'every-actions',
    webhooks: { enabled: true, mode: 'both', urls: [{ url: 'https://r.example/c', headers: {} }], mappings: [{ name: 'all', url: 'https://r.example/a', method: 'POST' }] },
  });
  await t('compose-source').selectOption({ label: 'every-actions' });
  await s.use('preview-actions-0-copy', t('preview-actions-0-copy'));
  await expectCopied(t('preview-actions-0-copy'));
  await t('compose-source').selectOption({ label: 'keep' });
  await expect(t('preview-actions')).toHaveCount(0);
  await lab.api('DELETE', `/sources/${both.id}`);
  await s.use('queue-button', t('queue-button'));
  await expect(t('send-result')).toContainText(/^Queued track|^Sent by the client/);
  await t('field-event').fill('Every Control');
  await s.use('send-button', t('send-button'));
  await expect(t('send-result')).toContainText(/^Sent (1 call in 1 batch|2 calls in [12] batch(es)?)|^Sent by the client/);
  s.done();
});

test('inspector: every control', async ({ page, receivers }) => {
  const [keep] = await lab.api<SourceView[]>('GET', '/sources');
  await openApp(page, lab, 'inspector');
  const s = new Screen(page, 'inspector');
  const t = (id: string) => page.getByTestId(id);
  const row = page.getByTestId('call-row').filter({ has: page.getByTestId('call-label').getByText('Every Control', { exact: true }) });
  await expect(row).toHaveAttribute('data-status', 'delivered');

  await s.use('filter-status', t('filter-status'), (l) => l.selectOption('failed'));
  await expect(t('inspector-empty')).toContainText('No call matches');
  await s.use('button:Clear filters', page.getByRole('button', { name: 'Clear filters' }));
  await expect(t('filter-status')).toHaveValue('');
  await expect(row).toBeVisible();
  await s.use('filter-type', t('filter-type'), (l) => l.selectOption('track'));
  await expect(row).toBeVisible();
  await s.use('filter-source', t('filter-source'), (l) => l.selectOption({ label: 'keep' }));
  await expect(row).toBeVisible();
  await t('filter-type').selectOption('');
  await t('filter-source').selectOption('');
  // Per-URL outcome filter (calls with at least one URL in that state).
  await s.use('filter-url-state', t('filter-url-state'), (l) => l.selectOption('delivered'));
  await expect(row).toBeVisible();
  await t('filter-url-state').selectOption('');
  // A term only in the body (the template's affiliation) finds the call only with "search bodies" on.
  await t('filter-search').fill('google store');
  await expect(t('inspector-empty')).toContainText('No call matches');
  await s.use('filter-search-bodies', t('filter-search-bodies'), (l) => l.check());
  await expect(row).toBeVisible();
  await t('filter-search-bodies').uncheck();
  // The miss offers the same in one click.
  await expect(t('search-bodies-offer')).toContainText('“google store”');
  await s.use('search-bodies', t('search-bodies'));
  await expect(row).toBeVisible();
  await expect(t('filter-search-bodies')).toBeChecked();
  await t('filter-search-bodies').uncheck();
  await t('filter-search').fill('');
  await expect(row).toBeVisible();
  // No source here has a tracking plan: no call has violations.
  await s.use('filter-violations', t('filter-violations'), (l) => l.check());
  await expect(t('inspector-empty')).toContainText('No call matches');
  await t('filter-violations').uncheck();
  await expect(row).toBeVisible();

  await s.use('pause-button', t('pause-button'));
  await expect(t('pause-button')).toHaveText(/^Resume/);
  await lab.api('POST', `/sources/${keep.id}/test`);
  await expect(t('pause-button')).toHaveText('Resume (1 new)');
  await t('pause-button').click();
  await expect(t('pause-button')).toHaveText('Pause');

  for (const n of [10, 100, 1000, 1]) {
    await s.use(`inspector-time-warp-${n}`, t(`inspector-time-warp-${n}`));
    await expect(t('inspector-time-warp')).toHaveAttribute('data-scale', String(n));
  }
  await t('inspector-time-warp-custom').fill('2');
  await s.use('inspector-time-warp-apply', t('inspector-time-warp-apply'));
  await expect(t('inspector-time-warp')).toHaveAttribute('data-scale', '2');
  await t('inspector-time-warp-1').click();

  for (const format of ['jsonl', 'har']) {
    await s.use('export-menu-toggle', t('export-menu-toggle'));
    const download = page.waitForEvent('download');
    await s.use(`export-${format}`, t(`export-${format}`));
    expect((await download).suggestedFilename()).toMatch(new RegExp(`\\.${format === 'har' ? 'har' : 'jsonl'}$`));
  }
  // Open an export: the calls of a JSON Lines file, read-only in place of the live ones, until Back.
  const exported = await fetch(`${lab.apiBase}/api/export/file?format=jsonl`, { headers: { Authorization: `Bearer ${lab.token}` } });
  const exportFile = test.info().outputPath('every.jsonl');
  writeFileSync(exportFile, await exported.text());
  await t('export-menu-toggle').click();
  const chooser = page.waitForEvent('filechooser');
  await s.use('open-export', t('open-export'));
  await (await chooser).setFiles(exportFile);
  await expect(t('export-banner-text')).toContainText('Viewing every.jsonl: ');
  await expect(row).toBeVisible();
  await s.use('export-view-back', t('export-view-back'));
  await expect(t('export-banner')).toHaveCount(0);
  await expect(t('filter-search')).toBeVisible();

  await row.click();
  await expect(t('call-detail')).toBeVisible();
  const timelineOk = page.locator(`[data-testid="url-timeline"][data-url="${receivers.ok.url}/every"]`);
  await expect(timelineOk).toHaveAttribute('data-attempts', '1');
  for (const id of ['copy-body', 'copy-curl']) {
    await s.use(id, t(id));
    await expectCopied(t(id));
  }
  const attempt = timelineOk.getByTestId('attempt').first();
  const curl = attempt.locator('[data-copy-label="Copy as cURL"]');
  await s.use('copy:Copy as cURL', curl);
  await expectCopied(curl);
  // The body is shown once, above the attempts; raw shows the exact bytes.
  await s.use('toggle-raw', t('toggle-raw'));
  await expect(t('toggle-raw')).toHaveText('pretty');
  await expect(t('delivery-body')).toHaveAttribute('data-mode', 'raw');
  await attempt.getByTestId('verify-secret').fill('wrong');
  await s.use('verify-button', attempt.getByTestId('verify-button'));
  await expect(attempt.getByTestId('verify-result')).toBeVisible();
  await s.use('verify-secret-source', attempt.getByTestId('verify-secret-source'));
  await expect(attempt.getByTestId('verify-result')).toHaveAttribute('data-status', 'match');
  await s.use('summary:attempt', attempt.locator('summary'));
  await expect(attempt).not.toHaveAttribute('open', '');
  await s.use('replay-url', timelineOk.getByTestId('replay-url'));
  await expect(timelineOk).toHaveAttribute('data-attempts', '2');
  await s.use('replay-button', t('replay-button'));
  await expect(timelineOk).toHaveAttribute('data-attempts', '3');
  // Replay with an edited body: cancelled once, then sent; the new attempt shows the body it sent.
  await s.use('edit-replay', t('edit-replay'));
  await expect(t('edit-replay-panel')).toBeVisible();
  await s.use('edit-replay-cancel', t('edit-replay-cancel'));
  await expect(t('edit-replay-panel')).toHaveCount(0);
  await t('edit-replay').click();
  const edited = '{"type":"track","event":"Every Edited","userId":"every_user"}';
  await t('edit-replay-body').locator('.cm-content').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(edited);
  await s.use('edit-replay-send', t('edit-replay-send'));
  await expect(timelineOk).toHaveAttribute('data-attempts', '4');
  const editedAttempt = timelineOk.locator('[data-testid="attempt"][data-edited="true"]');
  await expect(editedAttempt.getByTestId('attempt-body')).toHaveText(edited);
  await s.use('attempt-copy-edited', editedAttempt.getByTestId('attempt-copy-edited'));
  await expectCopied(editedAttempt.getByTestId('attempt-copy-edited'));
  await s.use('Close detail', page.getByRole('button', { name: 'Close detail' }));
  await expect(t('detail-pane')).toHaveCount(0);

  // Retry failed: one call failed for good (TLS to a plain-HTTP port is not retried), counted, cancelled once, then retried.
  const failing = await lab.api<SourceView>('POST', '/sources', {
    name: 'every-fail',
    webhooks: { enabled: true, urls: [{ url: `https://127.0.0.1:${receivers.ok.port}/tls`, headers: {} }] },
  });
  const failed = await lab.api<{ call: { id: number } }>('POST', `/sources/${failing.id}/test`);
  const attemptsOf = async (id: number) => (await lab.api<{ deliveries: { attemptCount: number }[] }>('GET', `/messages/${id}`)).deliveries[0]?.attemptCount;
  await expect(page.locator(`[data-testid="call-row"][data-id="${failed.call.id}"]`)).toHaveAttribute('data-status', 'failed');
  await s.use('retry-matching', t('retry-matching'));
  await expect(t('bulk-confirm-text')).toContainText('Send 1 failed or expired call matching');
  await s.use('retry-matching-cancel', t('retry-matching-cancel'));
  await expect(t('bulk-confirm')).toHaveCount(0);
  expect(await attemptsOf(failed.call.id)).toBe(1);
  await t('retry-matching').click();
  await s.use('retry-matching-confirm', t('retry-matching-confirm'));
  await expect(t('toast-info').filter({ hasText: 'Retrying 1 failed or expired call' })).toBeVisible();
  await expect.poll(() => attemptsOf(failed.call.id)).toBe(2);
  await lab.api('DELETE', `/sources/${failing.id}`);

  // An Actions batch (two calls in one request, a mapping of batch size 2) signed with Standard Webhooks:
  // the webhook-signature check, the link to the other member and the member's link back to its batch.
  const sw = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const pairs = await lab.api<SourceView>('POST', '/sources', {
    name: 'every-batch',
    webhooks: { enabled: true, mode: 'actions', mappings: [{ name: 'pairs', url: `${receivers.ok.url}/pairs`, method: 'POST', batchSize: 2 }], standardWebhooksSecret: sw },
  });
  const pairSent = await fetch(`${lab.collectorUrl}/v1/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${pairs.writeKey}:`).toString('base64')}` },
    body: JSON.stringify({ batch: [1, 2].map((n) => ({ type: 'track', event: `Every Pair ${n}`, userId: 'every_user' })) }),
  });
  expect(pairSent.status).toBe(200);
  await page.getByTestId('call-row').filter({ has: page.getByTestId('call-label').getByText('Every Pair 1', { exact: true }) }).click();
  const pairDelivery = t('call-detail').locator('[data-testid="delivery"][data-kind="actions"]');
  await expect(pairDelivery.getByTestId('batch-members')).toHaveAttribute('data-count', '2');
  const pairAttempt = pairDelivery.getByTestId('attempt').first();
  await pairAttempt.getByTestId('verify-sw-secret').fill(sw);
  await s.use('verify-sw-button', pairAttempt.getByTestId('verify-sw-button'));
  await expect(pairAttempt.getByTestId('verify-sw-result')).toHaveAttribute('data-status', 'match');
  await pairAttempt.getByTestId('verify-sw-secret').fill('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
  await s.use('verify-sw-secret-source', pairAttempt.getByTestId('verify-sw-secret-source'));
  await expect(pairAttempt.getByTestId('verify-sw-result')).toHaveAttribute('data-status', 'match');
  await s.use('batch-member-link', pairDelivery.getByTestId('batch-member-link'));
  await expect(t('batch-membership')).toContainText('Item 2 of 2 in the Actions batch of pairs');
  await s.use('batch-delivery-link', t('batch-delivery-link'));
  await expect(pairDelivery).toBeInViewport();
  await lab.api('DELETE', `/sources/${pairs.id}`);

  // Picked calls: how to pick (nothing picked), then one picked, checked again, drafted into a plan; unpick.
  await s.use('picks-draft', t('picks-draft'));
  await expect(t('picks-draft-text')).toContainText('Pick the calls to draft a plan from');
  await s.use('picks-draft-cancel', t('picks-draft-cancel'));
  await expect(t('picks-draft-bar')).toHaveCount(0);
  await page.getByTestId('call-row').first().click({ modifiers: ['ControlOrMeta'] });
  await expect(t('picked-count')).toHaveText('1 picked');
  await s.use('picks-recheck', t('picks-recheck'));
  await expect(t('toast-info').filter({ hasText: 'Checked 1 call against' })).toBeVisible();
  await t('picks-draft').click();
  await t('picks-draft-name').fill('every-draft');
  await s.use('picks-draft-confirm', t('picks-draft-confirm'));
  await expect(t('toast-info').filter({ hasText: 'Made the tracking plan "every-draft" from 1 call' })).toBeVisible();
  const drafted = (await lab.api<{ id: string; name: string }[]>('GET', '/tracking-plans')).find((p) => p.name === 'every-draft');
  expect(drafted).toBeDefined();
  // The plans screen's own test starts with no plan.
  await lab.api('DELETE', `/tracking-plans/${drafted!.id}`);
  await page.getByTestId('call-row').first().click({ modifiers: ['ControlOrMeta'] });
  await s.use('picks-clear', t('picks-clear'));
  await expect(t('picked-count')).toHaveCount(0);

  // Clear all calls: cancelled once, then confirmed; the list is empty and so is the store.
  await s.use('clear-calls', t('clear-calls'));
  await s.use('clear-calls-cancel', t('clear-calls-cancel'));
  await expect(row).toBeVisible();
  await t('clear-calls').click();
  await s.use('clear-calls-confirm', t('clear-calls-confirm'));
  await expect(t('inspector-empty')).toContainText('No calls yet');
  expect((await lab.api<{ total: number }>('GET', '/messages')).total).toBe(0);
  // The empty inspector's collector address.
  const copyCollector = t('inspector-empty').locator('[data-copy-label="Copy"]');
  await s.use('copy:Copy', copyCollector);
  await expectCopied(copyCollector);
  s.done();
});

test('receivers: every control', async ({ page }) => {
  await openApp(page, lab, 'compose');
  await page.getByTestId('nav-receivers').click();
  const s = new Screen(page, 'receivers');
  const t = (id: string) => page.getByTestId(id);
  await expect(t('receivers-empty')).toBeVisible();
  for (const n of [10, 100, 1000, 1]) {
    await s.use(`receivers-time-warp-${n}`, t(`receivers-time-warp-${n}`));
    await expect(t('receivers-time-warp')).toHaveAttribute('data-scale', String(n));
  }
  await t('receivers-time-warp-custom').fill('3');
  await s.use('receivers-time-warp-apply', t('receivers-time-warp-apply'));
  await expect(t('receivers-time-warp')).toHaveAttribute('data-scale', '3');
  await t('receivers-time-warp-1').click();

  await s.use('new-receiver', t('new-receiver'));
  await s.use('receiver-cancel', t('receiver-cancel'));
  await expect(t('receiver-form')).toHaveCount(0);
  await t('new-receiver').click();
  await t('rf-name').fill('every-sink');
  await t('rf-path').fill('/every-sink');
  await s.use('rf-tls', t('rf-tls'));
  await expect(t('rf-tls')).toBeChecked();
  await t('rf-tls').uncheck();
  await s.use('rf-ending', t('rf-ending'), (l) => l.selectOption({ index: 0 }));
  await s.use('rf-delay-mode', t('rf-delay-mode'), (l) => l.selectOption({ index: 0 }));
  // The receiver-under-test behaviours (cleared again: this sink takes every call).
  for (const id of ['rf-enforce-signature', 'rf-reject-duplicates']) {
    await s.use(id, t(id));
    await expect(t(id)).toBeChecked();
    await t(id).uncheck();
  }
  await s.use('rf-headers-add', t('rf-headers-add'));
  await s.use('rf-headers-remove-0', t('rf-headers-remove-0'));
  await expect(t('rf-headers-name-0')).toHaveCount(0);
  await t('rf-headers-add').click();
  await t('rf-headers-name-0').fill('X-Sink');
  await t('rf-headers-value-0').fill('every');
  await s.use('receiver-save', t('receiver-save'));
  await expect(t('receiver-panel').locator('h2')).toHaveText('every-sink');

  await s.use('receiver-row-copy', t('receiver-row-copy'));
  await expectCopied(t('receiver-row-copy'));
  await s.use('copy-receiver-url', t('copy-receiver-url'));
  await expectCopied(t('copy-receiver-url'));
  await s.use('attach-source', t('attach-source'), (l) => l.selectOption({ label: 'keep' }));
  await s.use('attach-button', t('attach-button'));
  await expect(t('toast-info').filter({ hasText: 'Source "keep" now sends to this receiver' })).toBeVisible();

  const [keep] = await lab.api<SourceView[]>('GET', '/sources');
  await lab.api('POST', `/sources/${keep.id}/test`);
  await expect(t('receiver-count')).toHaveText('1');
  await s.use('receiver-requests-reload', t('receiver-requests-reload'));
  await expect(t('request-row').first()).toBeVisible();

  await s.use('edit-receiver', t('edit-receiver'));
  await expect(t('receiver-form')).toBeVisible();
  await t('edit-receiver').click();
  await expect(t('receiver-form')).toHaveCount(0);

  await s.use('reset-receiver', t('reset-receiver'));
  await s.use('reset-receiver-cancel', t('reset-receiver-cancel'));
  // Cancelled: the requests are still listed (not an exact count: a retry may add one).
  await expect(t('receiver-count')).not.toHaveText('0');
  await expect(t('request-row').first()).toBeVisible();
  await t('reset-receiver').click();
  await s.use('reset-receiver-confirm', t('reset-receiver-confirm'));
  await expect(t('receiver-count')).toHaveText('0');
  await expect(t('requests-empty')).toBeVisible();

  // Attached to "keep": the confirm names it, and deleting removes the URL from it (issue 26).
  const sinkUrl = (await t('receiver-url').textContent())!;
  await s.use('delete-receiver', t('delete-receiver'));
  await expect(t('delete-receiver-uses')).toContainText('Used by keep');
  await s.use('delete-receiver-cancel', t('delete-receiver-cancel'));
  await expect(t('receiver-row')).toHaveCount(1);
  await t('delete-receiver').click();
  await s.use('delete-receiver-detach', t('delete-receiver-detach'));
  await expect(t('receiver-row')).toHaveCount(0);
  expect(sinkUrl).toContain('/every-sink');
  await expect.poll(async () => (await lab.api<SourceView[]>('GET', '/sources')).find((x) => x.name === 'keep')?.webhooks.urls.map((u) => u.url)).not.toContain(sinkUrl);
  // One nobody sends to is deleted after a plain confirm.
  await lab.api('POST', '/receivers', { name: 'every-spare', path: '/every-spare' });
  await t('receiver-row').filter({ hasText: 'every-spare' }).click();
  await t('delete-receiver').click();
  await expect(t('delete-receiver-uses')).toHaveCount(0);
  await s.use('delete-receiver-confirm', t('delete-receiver-confirm'));
  await expect(t('receiver-row')).toHaveCount(0);
  await expect(t('receivers-empty')).toBeVisible();
  await expect.poll(async () => (await lab.api<unknown[]>('GET', '/receivers')).length).toBe(0);
  s.done();
});

test('audiences: every control', async ({ page }) => {
  const [keep] = await lab.api<SourceView[]>('GET', '/sources');
  const res = await fetch(`${lab.collectorUrl}/v1/identify`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${keep.writeKey}:`).toString('base64')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ userId: 'every_pro', traits: { plan: 'pro' } }),
  });
  expect(res.status).toBe(200);
  await openApp(page, lab, 'compose');
  await page.getByTestId('nav-audiences').click();
  const s = new Screen(page, 'audiences');
  const t = (id: string) => page.getByTestId(id);

  await s.use('new-audience', t('new-audience'));
  await s.use('aud-cancel', t('aud-cancel'));
  await expect(t('audience-form')).toHaveCount(0);
  await t('new-audience').click();
  await t('aud-name').fill('Every Pro');
  await s.use('aud-type', t('aud-type'), (l) => l.selectOption({ index: 1 }));
  await s.use('aud-compute-kind', t('aud-compute-kind'), (l) => l.selectOption({ index: 1 }));
  await t('aud-type').selectOption({ index: 0 });
  await expect(t('rule-builder')).toBeVisible();
  await t('cond-rule.conditions[0]-trait').fill('plan');
  await s.use('cond-rule.conditions[i]-op', t('cond-rule.conditions[0]-op'), (l) => l.selectOption({ index: 0 }));
  await t('cond-rule.conditions[0]-value').fill('pro');
  await s.use('add-event-rule', t('add-event-rule'));
  await expect(t('cond-rule.conditions[1]-op')).toBeVisible();
  await s.use('Remove condition', page.getByTestId('rule-condition').nth(1).getByRole('button', { name: 'Remove condition' }));
  await expect(t('rule-condition')).toHaveCount(1);
  await s.use('add-group-rule', t('add-group-rule'));
  await expect(t('rule-group')).toHaveCount(1);
  // The nested group's own controls.
  const g = 'rule.conditions[1]';
  await s.use('combine-rule.conditions[i]-or', t(`combine-${g}-or`));
  await expect(t(`combine-${g}-or`)).toHaveClass(/active/);
  await s.use('combine-rule.conditions[i]-and', t(`combine-${g}-and`));
  await expect(t(`combine-${g}-and`)).toHaveClass(/active/);
  const nestedConditions = t('rule-group').first().getByTestId('rule-condition');
  const inNested = await nestedConditions.count();
  await s.use('add-trait-rule.conditions[i]', t(`add-trait-${g}`));
  await s.use('add-event-rule.conditions[i]', t(`add-event-${g}`));
  await expect(nestedConditions).toHaveCount(inNested + 2);
  await s.use('add-group-rule.conditions[i]', t(`add-group-${g}`));
  await expect(t('rule-group')).toHaveCount(2);
  await s.use('remove-group-rule.conditions[i]', t('rule-group').nth(1).getByRole('button', { name: 'Remove group' }));
  await expect(t('rule-group')).toHaveCount(1);
  await t(`remove-group-${g}`).click();
  await expect(t('rule-group')).toHaveCount(0);
  await s.use('add-trait-rule', t('add-trait-rule'));
  await expect(t('rule-condition')).toHaveCount(2);
  await page.getByTestId('rule-condition').nth(1).getByRole('button', { name: 'Remove condition' }).click();
  await s.use('combine-rule-or', t('combine-rule-or'));
  await expect(t('combine-rule-or')).toHaveClass(/active/);
  await s.use('combine-rule-and', t('combine-rule-and'));
  await expect(t('combine-rule-and')).toHaveClass(/active/);
  await s.use('aud-source-keep', t('aud-source-keep'), async (l) => {
    await l.uncheck();
    await l.check();
  });
  await expect(t('aud-source-keep')).toBeChecked();
  await s.use('aud-preview', t('aud-preview'));
  await expect(t('preview-total')).toHaveText('1 member');
  await s.use('aud-save', t('aud-save'));
  const audRow = t('audience-row').filter({ hasText: 'Every Pro' });
  await expect(audRow.getByTestId('audience-members')).toHaveText('1');
  await s.use('audience-sync', audRow.getByTestId('audience-sync'));
  await expect(audRow.getByTestId('audience-sync-result')).toContainText('0 entered');
  await s.use('audience-members-toggle', audRow.getByTestId('audience-members-toggle'));
  await expect(t('audience-member')).toHaveText([/every_pro\s*true/]);
  await audRow.getByTestId('audience-members-toggle').click();
  await expect(t('audience-member')).toHaveCount(0);
  await s.use('audience-edit', audRow.getByTestId('audience-edit'));
  await expect(t('audience-form')).toHaveAttribute('data-mode', 'edit');
  await expect(t('aud-name')).toHaveValue('Every Pro');
  await expect(t('cond-rule.conditions[0]-value')).toHaveValue('pro');
  await t('aud-cancel').click();
  await expect(t('audience-form')).toHaveCount(0);

  await s.use('audience-delete', audRow.getByTestId('audience-delete'));
  await s.use('audience-delete-cancel', audRow.getByTestId('audience-delete-cancel'));
  await expect(audRow).toHaveCount(1);
  await audRow.getByTestId('audience-delete').click();
  await s.use('audience-delete-confirm', audRow.getByTestId('audience-delete-confirm'));
  await expect(audRow).toHaveCount(0);
  await expect(t('audiences-empty')).toBeVisible();
  s.done();
});

test('deletions, load, client and settings: every control', async ({ page, consoleGuard }) => {
  await openApp(page, lab, 'compose');
  const t = (id: string) => page.getByTestId(id);

  await page.getByTestId('nav-deletions').click();
  const del = new Screen(page, 'deletions');
  await t('deletion-user').fill('every_user');
  await del.use('deletion-purge', t('deletion-purge'));
  await expect(t('deletion-purge')).toBeChecked();
  await del.use('deletion-submit', t('deletion-submit'));
  // A purge asks once more, in place: cancel sends nothing, confirm sends it.
  await expect(t('deletion-purge-ask')).toContainText('every_user');
  await del.use('deletion-purge-cancel', t('deletion-purge-cancel'));
  await expect(t('deletion-purge-ask')).toHaveCount(0);
  await expect(t('deletion-row').filter({ hasText: 'every_user' })).toHaveCount(0);
  await t('deletion-submit').click();
  await del.use('deletion-purge-confirm', t('deletion-purge-confirm'));
  await expect(t('deletion-row').filter({ hasText: 'every_user' })).toHaveCount(1);
  await expect(t('deletion-row').filter({ hasText: 'every_user' })).toContainText('purged');
  del.done();

  await page.getByTestId('nav-load').click();
  const load = new Screen(page, 'load');
  await t('load-rate').fill('5');
  await load.use('load-stop-by', t('load-stop-by'), (l) => l.selectOption('duration'));
  await t('load-duration').fill('60');
  await load.use('load-template', t('load-template'), (l) => l.selectOption({ index: 0 }));
  await load.use('load-source', t('load-source'), (l) => l.selectOption({ label: 'keep' }));
  await load.use('load-random-users', t('load-random-users'));
  await expect(t('load-users')).toBeDisabled();
  await load.use('load-template-toggle', t('load-template-toggle'));
  await load.use('load-start', t('load-start'));
  await expect(t('load-state')).toHaveText('running');
  await load.use('load-stop', t('load-stop'));
  await expect(t('load-state')).not.toHaveText('running');
  await expect(t('load-stop')).toHaveCount(0);
  load.done();

  await page.getByTestId('nav-client').click();
  const client = new Screen(page, 'client');
  await t('client-flush-at').fill('7');
  await client.use('client-apply', t('client-apply'));
  await expect(t('toast-info').filter({ hasText: 'Client settings saved' })).toBeVisible();
  expect((await lab.api<{ flushAt: number }>('GET', '/client/settings')).flushAt).toBe(7);
  const [keepSource] = await lab.api<SourceView[]>('GET', '/sources');
  for (const what of ['snippet', 'cdnurl']) {
    await client.use(`sdk-copy-${what}-<source>`, t(`sdk-copy-${what}-${keepSource.id}`));
    await expectCopied(t(`sdk-copy-${what}-${keepSource.id}`));
  }
  await client.use('sdk-metrics-refresh', t('sdk-metrics-refresh'));
  await expect(t('sdk-metrics').or(t('sdk-metrics-empty'))).toBeVisible();
  await client.use('client-flush', t('client-flush'));
  await expect(t('toast-info').filter({ hasText: /^Flushed \d+ calls? in \d+ batch(es)?/ })).toBeVisible();
  client.done();

  await page.getByTestId('nav-settings').click();
  const set = new Screen(page, 'settings');
  for (const n of [10, 100, 1000, 1]) {
    await set.use(`settings-time-warp-${n}`, t(`settings-time-warp-${n}`));
    await expect(t('settings-time-warp')).toHaveAttribute('data-scale', String(n));
  }
  await t('settings-time-warp-custom').fill('4');
  await set.use('settings-time-warp-apply', t('settings-time-warp-apply'));
  await expect(t('settings-time-warp')).toHaveAttribute('data-scale', '4');
  await t('settings-time-warp-1').click();
  await expect(t('settings-time-warp')).toHaveAttribute('data-scale', '1');
  await set.use('set-theme', t('set-theme'), (l) => l.selectOption('dark'));
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect.poll(() => page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(22, 24, 29)');
  await t('set-theme').selectOption('system');
  await expect(page.locator('html')).not.toHaveAttribute('data-theme', /./);
  await set.use('set-payload-format', t('set-payload-format'), (l) => l.selectOption('documented'));
  await set.use('set-preset', t('set-preset'), (l) => l.selectOption('fast'));
  await set.use('set-strict', t('set-strict'));
  await set.use('set-alias-keys', t('set-alias-keys'), (l) => l.selectOption('camel'));
  await expect(t('set-rotation-window')).toHaveValue('24');
  await t('set-rotation-window').fill('1.5');
  await set.use('settings-save', t('settings-save'));
  await expect.poll(async () => lab.api<{ payloadFormat: string; strict: boolean }>('GET', '/settings')).toMatchObject({ payloadFormat: 'documented', strict: true, aliasKeys: 'camel', secretRotationWindowMs: 5_400_000 });
  // A negative window is named on its field.
  consoleGuard.allow(/status of 400 \(Bad Request\) \(.*\/api\/settings/);
  await t('set-rotation-window').fill('-1');
  await t('settings-save').click();
  await expect(t('error-secretRotationWindowMs')).toContainText('at least 0');
  await t('set-rotation-window').fill('24');
  await t('settings-save').click();
  await expect.poll(async () => (await lab.api<{ secretRotationWindowMs: number }>('GET', '/settings')).secretRotationWindowMs).toBe(86_400_000);
  const download = page.waitForEvent('download');
  await set.use('config-export', t('config-export'));
  const file = await (await download).path();
  const chooser = page.waitForEvent('filechooser');
  await set.use('config-import', t('config-import'));
  await (await chooser).setFiles(file);
  await expect(t('config-import-error')).toHaveCount(0);
  await expect(t('config-import')).toHaveText('Import config…');
  set.done();
});

test('tracking plans: every control', async ({ page, consoleGuard }) => {
  // Refused on purpose below: the same file again without "replace" (409), a schema that does not compile (400).
  consoleGuard.allow(/status of 409 .*\/api\/tracking-plans\/import/);
  consoleGuard.allow(/status of 400 .*\/api\/tracking-plans\//);
  await openApp(page, lab, 'compose');
  const t = (id: string) => page.getByTestId(id);
  await t('nav-plans').click();
  const s = new Screen(page, 'plans');
  await expect(t('plans-empty')).toBeVisible();
  // A plan file as Typewriter v8 writes it, chosen in the file dialog.
  const file = test.info().outputPath('plan.json');
  writeFileSync(file, JSON.stringify({ name: 'Every plan', rules: [{ key: 'Every Control', type: 'TRACK', version: 1, jsonSchema: { eventMetadata: { name: 'Every Control', type: 'TRACK' }, type: 'object', properties: { total: { type: 'number' } } } }] }));
  let chooser = page.waitForEvent('filechooser');
  await s.use('plans-import', t('plans-import'));
  await (await chooser).setFiles(file);
  const card = page.locator('[data-testid="plan-card"][data-name="Every plan"]');
  await expect(card.getByTestId('plan-rule')).toHaveCount(1);
  // The same file again: refused, unless "replace" is ticked.
  chooser = page.waitForEvent('filechooser');
  await t('plans-import').click();
  await (await chooser).setFiles(file);
  await expect(t('plans-error')).toContainText('exists');
  await s.use('plans-import-replace', t('plans-import-replace'), (l) => l.check());
  chooser = page.waitForEvent('filechooser');
  await t('plans-import').click();
  await (await chooser).setFiles(file);
  await expect(t('plans-error')).toHaveCount(0);
  // A Segment rules file names no plan: the screen asks for a name (cancelled once, then given).
  const unnamed = test.info().outputPath('every-rules.json');
  writeFileSync(unnamed, JSON.stringify([{ type: 'TRACK', key: 'Every Unnamed', version: 1, jsonSchema: { type: 'object' } }]));
  for (const id of ['plans-import-name-cancel', 'plans-import-name-submit']) {
    chooser = page.waitForEvent('filechooser');
    await t('plans-import').click();
    await (await chooser).setFiles(unnamed);
    await expect(t('plans-import-name')).toHaveValue('every-rules');
    await s.use(id, t(id));
    await expect(t('plans-import-name-form')).toHaveCount(0);
  }
  const unnamedCard = page.locator('[data-testid="plan-card"][data-name="every-rules"]');
  await expect(unnamedCard.getByTestId('plan-rule')).toHaveCount(1);
  await lab.api('DELETE', `/tracking-plans/${(await lab.api<{ id: string; name: string }[]>('GET', '/tracking-plans')).find((p) => p.name === 'every-rules')!.id}`);
  await expect(unnamedCard).toHaveCount(0);
  // Connect the source "keep" with every enforcement setting, then disconnect it.
  await s.use('plan-connect-source', card.getByTestId('plan-connect-source'), (l) => l.selectOption({ label: 'keep' }));
  await s.use('plan-connect-events', card.getByTestId('plan-connect-events'), (l) => l.selectOption('block'));
  await s.use('plan-connect-properties', card.getByTestId('plan-connect-properties'), (l) => l.selectOption('omit'));
  await s.use('plan-connect-violations', card.getByTestId('plan-connect-violations'), (l) => l.selectOption('block'));
  await s.use('plan-connect', card.getByTestId('plan-connect'));
  await expect(card.getByTestId('plan-sources')).toContainText('keep (unplanned events block, unplanned properties omit, violations block)');
  // A call the plan blocks: the card counts it, and lists it in the Inspector on a click.
  const keep = (await lab.api<SourceView[]>('GET', '/sources')).find((x) => x.name === 'keep')!;
  const blockedRes = await fetch(`${lab.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${keep.writeKey}:`).toString('base64')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ userId: 'every_plan', event: 'Not In Every Plan' }),
  });
  expect(blockedRes.status).toBe(200);
  await t('nav-compose').click();
  await t('nav-plans').click();
  await s.use('plan-show-blocked', card.getByTestId('plan-show-blocked'), async (l) => {
    await l.click();
    await expect(t('filter-status')).toHaveValue('blocked');
    await expect(row(page, 'Not In Every Plan')).toHaveCount(1);
    await t('filter-status').selectOption('');
    await t('nav-plans').click();
    await expect(t('screen-plans')).toBeVisible();
  });
  await s.use('plan-disconnect', card.getByTestId('plan-disconnect'));
  await expect(card.getByTestId('plan-sources')).toHaveText('No source is connected.');
  // A draft from the calls of the source "keep".
  await s.use('plans-draft-source', t('plans-draft-source'), (l) => l.selectOption({ label: 'keep' }));
  await s.use('plans-draft', t('plans-draft'));
  await expect(page.locator('[data-testid="plan-card"][data-name="keep (draft)"]').getByTestId('plan-rule').first()).toBeVisible();
  // A plan of more than 50 rules lists the first 50 until "Show all" is pressed.
  const many = await lab.api<{ id: string }>('POST', '/tracking-plans', { name: 'Many rules', rules: Array.from({ length: 51 }, (_, i) => ({ type: 'TRACK', key: `R${i}`, version: 1, jsonSchema: {} })) });
  // Made through the API: the screen reads the plans again when it is opened again.
  await t('nav-compose').click();
  await t('nav-plans').click();
  const manyCard = page.locator('[data-testid="plan-card"][data-name="Many rules"]');
  await expect(manyCard.getByTestId('plan-rule')).toHaveCount(50);
  await s.use('plan-rules-toggle', manyCard.getByTestId('plan-rules-toggle'));
  await expect(manyCard.getByTestId('plan-rule')).toHaveCount(51);
  await lab.api('DELETE', `/tracking-plans/${many.id}`);
  // A schema that does not compile is refused by the engine, with the reason; a good one is saved.
  await s.use('rule-edit', card.getByTestId('rule-edit'));
  await card.getByTestId('rule-schema').fill('{"type": "object", "properties": {"properties": {"type": "nope"}}}');
  await s.use('rule-save', card.getByTestId('rule-save'));
  await expect(t('plans-error')).toContainText('does not compile');
  await s.use('rule-cancel', card.getByTestId('rule-cancel'));
  await card.getByTestId('rule-edit').click();
  await card.getByTestId('rule-schema').fill('{"type": "object", "required": ["properties"]}');
  await card.getByTestId('rule-save').click();
  await expect(card.getByTestId('rule-schema')).toHaveCount(0);
  await expect.poll(async () => (await lab.api<{ name: string; rules: { jsonSchema: unknown }[] }[]>('GET', '/tracking-plans')).find((p) => p.name === 'Every plan')?.rules[0]?.jsonSchema).toEqual({ type: 'object', required: ['properties'] });
  await s.use('plan-delete', card.getByTestId('plan-delete'));
  await s.use('plan-delete-cancel', card.getByTestId('plan-delete-cancel'));
  await card.getByTestId('plan-delete').click();
  await s.use('plan-delete-confirm', card.getByTestId('plan-delete-confirm'));
  await expect(card).toHaveCount(0);
  s.done();
});

// Last: the probe makes its "probe" source, which the screens above would list.
test('check a receiver: every control', async ({ page, receivers }) => {
  await openApp(page, lab, 'compose');
  const t = (id: string) => page.getByTestId(id);
  await t('nav-probe').click();
  const probe = new Screen(page, 'probe');
  await t('probe-url').fill(`${receivers.ok.url}/probe-every-control`);
  await t('probe-secret').fill('every-control-secret');
  await probe.use('probe-mode', t('probe-mode'), (l) => l.selectOption('actions'));
  await expect(page.locator('[data-field="mode"]')).toContainText('the Classic body checks are skipped');
  await t('probe-source').fill('keep');
  await t('probe-mapping').fill('orders');
  await probe.use('probe-copy-ci', t('probe-copy-ci'));
  await expectCopied(t('probe-copy-ci'));
  await t('probe-mode').selectOption('classic');
  await probe.use('probe-run', t('probe-run'));
  await expect(t('probe-report')).toHaveAttribute('data-state', 'done');
  // The ok receiver checks no signature: the signature check fails, as it should.
  const signature = page.locator('[data-testid="probe-check"][data-check="signature"]');
  await expect(signature).toHaveAttribute('data-verdict', 'fail');
  await probe.use('summary:probe-check', signature.locator('summary'));
  // Three it must refuse, two it must accept (issue 37).
  await expect(signature.getByTestId('probe-evidence')).toHaveCount(5);
  probe.done();
});
