import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { expect, ownLab, ownReceivers, test } from './lab-fixture';
import { createSource, openApp, row, useSourceInCompose } from './ui-steps';

// Issue 17 in a browser against web mode: a source in "Both" mode with an Actions mapping set up in
// the Destinations screen (kept across a reload, a bad mapping refused on its field), and the Compose
// preview showing the Classic and the Actions request side by side with what each signature covers.

const SECRET = 'actions-e2e-secret';

test.describe.configure({ mode: 'serial' });

const lab = ownLab();
const receivers = ownReceivers();
// The Actions mapping's receiver answers a batch with per-item statuses: the first item 200, the others 422.
let items: TestReceiver;
test.beforeAll(async () => {
  items = await startReceiver((req, res) => {
    const body = JSON.parse(req.body.toString('utf8') || 'null') as unknown;
    const answer = Array.isArray(body) ? body.map((_, i) => (i === 0 ? 200 : { status: 422, error: 'invalid total' })) : { ok: true };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
});
test.afterAll(async () => {
  await items?.close();
});

interface SourceView {
  id: string;
  name: string;
  webhooks: Record<string, unknown>;
}

/** Type into a CodeMirror editor, replacing what it holds. */
async function fillEditor(page: import('@playwright/test').Page, testId: string, text: string) {
  await page.getByTestId(testId).locator('.cm-content').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(text);
}

test('destinations: Both mode with a mapping, saved and kept across a reload; a bad mapping is refused on its field', async ({ page, consoleGuard }) => {
  consoleGuard.allow(/status of 400 \(Bad Request\) \(.*\/api\/sources\//);
  await lab.api('POST', '/sources', { name: 'other' });
  const shop = async () => (await lab.api<SourceView[]>('GET', '/sources')).find((s) => s.name === 'shop')!;
  await openApp(page, lab, 'destinations');
  await createSource(page, 'shop');
  const t = (id: string) => page.getByTestId(id);

  await t('wh-mode').selectOption('both');
  await t('wh-add-url').click();
  await t('wh-url-0').fill(`${receivers.ok.url}/classic`);
  await t('wh-secret').fill(SECRET);
  await t('wh-add-mapping').click();
  await t('am-name-0').fill('orders');
  await t('am-type-0-op').selectOption('equals');
  await t('am-type-0').fill('track');
  await t('am-event-0-op').selectOption('contains');
  await t('am-event-0').fill('Order');
  await t('am-method-0').selectOption('PUT');
  await t('am-url-0').fill(`${items.url}/actions`);
  // A loopback receiver: Segment would refuse it, the lab says so and still delivers.
  await expect(t('am-url-warning-0')).toContainText("Segment could not reach this URL from its cloud: 127.0.0.1 is a loopback address");
  await t('am-headers-0-add').click();
  await t('am-headers-0-name-0').fill('X-Team');
  await t('am-headers-0-value-0').fill('growth');
  await fillEditor(page, 'am-data-0', '{"total": {"@path": "$.properties.total"}, "who": {"@template": "{{userId}}"}}');
  await t('am-batch-0').check();
  await expect(t('am-batch-size-0')).toHaveValue('1000');
  await t('am-batch-size-0').fill('2');

  // A Standard Webhooks secret of the wrong shape is named at once and cannot be saved; Generate makes one.
  await t('wh-sw-secret').fill('not-a-secret');
  await expect(t('error-webhooks.standardWebhooksSecret')).toContainText('must start with "whsec_"');
  await expect(t('wh-save')).toBeDisabled();
  await t('wh-sw-generate').click();
  // Generate makes a 32-byte key, as the Standard Webhooks spec asks (24 to 64).
  await expect(t('wh-sw-secret')).toHaveValue(/^whsec_[A-Za-z0-9+/]{43}=$/);
  await expect(t('error-webhooks.standardWebhooksSecret')).toHaveCount(0);
  await t('wh-sw-toggle').click();
  await expect(t('wh-sw-secret')).toHaveAttribute('type', 'password');
  const swSecret = await t('wh-sw-secret').inputValue();

  await t('wh-save').click();
  await expect(t('toast-info').filter({ hasText: 'Webhooks settings saved' })).toBeVisible();
  expect((await shop()).webhooks).toEqual({
    enabled: true,
    mode: 'both',
    urls: [{ url: `${receivers.ok.url}/classic`, headers: {} }],
    sharedSecret: SECRET,
    mappings: [
      {
        name: 'orders',
        trigger: { type: { equals: 'track' }, event: { contains: 'Order' } },
        url: `${items.url}/actions`,
        method: 'PUT',
        headers: { 'X-Team': 'growth' },
        data: { total: { '@path': '$.properties.total' }, who: { '@template': '{{userId}}' } },
        batchSize: 2,
      },
    ],
    standardWebhooksSecret: swSecret,
  });

  // Kept across a reload, and the form does not read as changed.
  await page.reload();
  await t('nav-destinations').click();
  await t('source-item').filter({ hasText: 'shop' }).click();
  await expect(t('wh-mode')).toHaveValue('both');
  await expect(t('am-name-0')).toHaveValue('orders');
  await expect(t('am-method-0')).toHaveValue('PUT');
  await expect(t('am-event-0-op')).toHaveValue('contains');
  await expect(t('am-event-0')).toHaveValue('Order');
  await expect(t('am-batch-0')).toBeChecked();
  await expect(t('am-batch-size-0')).toHaveValue('2');
  await expect(t('am-headers-0-name-0')).toHaveValue('X-Team');
  await expect(t('am-data-0')).toContainText('"@path": "$.properties.total"');
  await expect(t('wh-sw-secret')).toHaveValue(swSecret);
  await expect(t('webhooks-form')).not.toContainText('unsaved changes');

  // The engine refuses a second mapping's URL and a bad batch size: each message on its own field.
  await t('wh-add-mapping').click();
  await expect(t('am-name-1')).toHaveValue('mapping 2');
  await t('am-url-1').fill('ftp://not-http.example/x');
  await t('am-batch-1').check();
  await t('am-batch-size-1').fill('5000');
  await t('wh-save').click();
  await expect(t('error-webhooks.mappings[1].url')).toContainText('must be an absolute http: or https: URL');
  await expect(t('error-webhooks.mappings[1].batchSize')).toContainText('at most 4000');
  await expect(t('error-webhooks.mappings[0].url')).toHaveCount(0);
  // A data text that is not JSON is held back before it is sent.
  await fillEditor(page, 'am-data-1', '{"a": ');
  await t('wh-save').click();
  await expect(t('error-webhooks.mappings[1].data')).toContainText('not JSON');
  // A directive Segment's mapping kit does not know is named under the data field.
  await fillEditor(page, 'am-data-1', '{"a": {"@nope": 1}}');
  await t('wh-save').click();
  await expect(t('error-webhooks.mappings[1].data')).toContainText('has an invalid directive: @nope');
  // Switching sources with unsaved changes asks first (Keep editing: the draft stays).
  await t('source-item').filter({ hasText: 'other' }).click();
  await expect(t('leave-dialog')).toContainText('the Webhooks settings of shop');
  await t('leave-keep').click();
  await expect(t('source-panel').locator('h2')).toHaveText('shop');
  await expect(t('am-name-1')).toHaveValue('mapping 2');
  await t('am-remove-1').click();
  await expect(t('am-name-1')).toHaveCount(0);
  await expect(t('webhooks-form')).not.toContainText('unsaved changes');
  expect(((await shop()).webhooks.mappings as unknown[]).length).toBe(1);
});

test('compose: the Classic and the Actions request side by side, with what each signature covers', async ({ page }) => {
  await openApp(page, lab, 'compose');
  await useSourceInCompose(page, 'shop');
  await page.getByTestId('template-select').selectOption('order-completed');
  await page.getByTestId('field-userId').fill('actions_user');
  await page.getByTestId('field-event').fill('Order Completed');
  const t = (id: string) => page.getByTestId(id);

  const classic = t('preview-classic');
  const actions = t('preview-actions');
  await expect(classic).toHaveCount(1);
  await expect(actions).toHaveCount(1);
  await expect(actions).toHaveAttribute('data-mapping', 'orders');
  // Side by side: the same row, Classic on the left.
  const [cb, ab] = [await classic.boundingBox(), await actions.boundingBox()];
  expect(ab!.x).toBeGreaterThan(cb!.x + cb!.width - 1);
  expect(Math.abs(ab!.y - cb!.y)).toBeLessThan(4);

  await expect(t('preview-webhook')).toContainText(`Classic: POST → ${receivers.ok.url}/classic`);
  await expect(t('preview-signature-note')).toContainText('X-Signature = HMAC-SHA1(shared secret, the body bytes');
  await expect(t('preview-actions-0')).toContainText(`Actions · orders: PUT → ${items.url}/actions`);
  await expect(t('preview-actions-0')).toContainText('x-team: growth');
  await expect(t('preview-actions-0')).toContainText('user-agent: Segment (Actions)');
  await expect(t('preview-actions-0')).toContainText('"who": "actions_user"');
  await expect(t('preview-actions-batch-0')).toContainText('the body is a JSON array, shown here with this one call');
  await expect(t('preview-actions-note-0')).toContainText('of the FIRST event only, not the array body');
  await expect(t('preview-actions-url-warning-0')).toContainText("Segment could not reach this URL from its cloud");
  // The signature shown is the HMAC of the first event's data, not of the array body.
  const signed = (await t('preview-actions-signed-0').textContent())!;
  expect(JSON.parse(signed)).toMatchObject({ who: 'actions_user' });
  const expected = createHmac('sha1', SECRET).update(signed, 'utf8').digest('hex');
  await expect(t('preview-actions-signature-0')).toHaveText(`X-Signature ${expected}`);
  await expect(t('preview-actions-0')).toContainText(`x-signature: ${expected}`);
  // Standard Webhooks headers on both, with an example id and timestamp, said so.
  await expect(t('preview-webhook')).toContainText(/webhook-signature: v1,[A-Za-z0-9+/=]+/);
  await expect(t('preview-actions-0')).toContainText(/webhook-id: msg_[A-Za-z0-9_-]{24}/);
  await expect(t('preview-sw-note')).toContainText('are examples');

  // A page call does not match "orders": only the Classic request, and why.
  await t('type-page').click();
  await expect(t('preview-actions')).toHaveCount(0);
  await expect(t('preview-skipped')).toContainText('orders (type = "track" and contains(event, "Order"))');
  await expect(t('preview-classic')).toHaveCount(1);
});

test('inspector: an Actions batch delivery next to the Classic one, with its members, per-item statuses and both signatures checked', async ({ page }) => {
  const source = (await lab.api<(SourceView & { writeKey: string })[]>('GET', '/sources')).find((s) => s.name === 'shop')!;
  const swSecret = source.webhooks.standardWebhooksSecret as string;
  // Two matching track calls in one request: the mapping's batch of 2 is full and goes out at once.
  const sent = await fetch(`${lab.collectorUrl}/v1/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}` },
    body: JSON.stringify({
      batch: [
        { type: 'track', event: 'Order Completed', userId: 'batch_a', properties: { total: 10 } },
        { type: 'track', event: 'Order Refunded', userId: 'batch_b', properties: { total: 20 } },
      ],
    }),
  });
  expect(sent.status).toBe(200);

  // What the receiver got: one PUT with the array, X-Signature over the first item's data only.
  const [got] = await items.waitForRequests(1, 15_000);
  const text = got.body.toString('utf8');
  expect(got.method).toBe('PUT');
  expect(JSON.parse(text)).toEqual([
    { total: 10, who: 'batch_a' },
    { total: 20, who: 'batch_b' },
  ]);
  expect(got.headers['x-signature']).toBe(createHmac('sha1', SECRET).update(JSON.stringify({ total: 10, who: 'batch_a' })).digest('hex'));
  expect(got.headers['x-team']).toBe('growth');
  expect(new Webhook(swSecret).verify(text, got.headers as Record<string, string>)).toBeTruthy();

  await openApp(page, lab, 'inspector');
  const t = (id: string) => page.getByTestId(id);
  // The list says the call also went through Actions: a tag beside its status chip, each Actions
  // part in its tooltip, and a sentence for a screen reader instead of the abbreviation.
  const tag = row(page, 'Order Completed').getByTestId('actions-tag');
  await expect(tag).toHaveAttribute('data-state', 'delivered');
  await expect(tag.locator('.tag-long')).toBeVisible();
  await expect(tag.locator('.tag-long')).toHaveText('Actions ×1');
  await expect(tag.locator('.tag-long')).toHaveAttribute('aria-hidden', 'true');
  await expect(tag).toHaveAttribute('title', 'Through Webhooks (Actions):\nActions: orders — delivered · HTTP 200');
  await expect(tag.locator('.sr-only')).toHaveText(', through Webhooks (Actions): Actions: orders — delivered · HTTP 200');
  await row(page, 'Order Completed').click();
  // At 1024 px with the detail open the list is narrow: the tag shortens, the chip keeps its word.
  await page.setViewportSize({ width: 1024, height: 700 });
  await expect(tag.locator('.tag-short')).toHaveText('A×1');
  await expect(tag.locator('.tag-short')).toBeVisible();
  await expect(tag.locator('.tag-long')).toBeHidden();
  const chip = row(page, 'Order Completed').locator('.chip');
  expect(await chip.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  await page.setViewportSize({ width: 1280, height: 720 });
  const detail = t('call-detail');
  const actions = detail.locator('[data-testid="delivery"][data-kind="actions"]');
  await expect(detail.locator('[data-testid="delivery"][data-kind="classic"]')).toHaveCount(1);
  await expect(actions.getByTestId('delivery-title')).toHaveText('Webhooks (Actions) · orders · PUT');
  await expect(actions).toHaveAttribute('data-method', 'PUT');
  await expect(actions.getByTestId('delivery-url-warning')).toContainText("Segment could not reach this URL from its cloud");
  await expect(actions.getByTestId('batch-members')).toContainText('batch of 2 calls');
  // Per-item statuses from the receiver's answer, next to each call.
  await expect(actions.getByTestId('batch-item-status')).toHaveText(['200', '422']);
  await expect(actions.getByTestId('url-state')).toHaveAttribute('title', /^Actions: orders — delivered · HTTP 200/);
  await expect(t('batch-membership')).toContainText('Item 1 of 2 in the Actions batch of orders');

  // The verify box checks X-Signature the way Segment signs a batch, and the Standard Webhooks signature.
  const attempt = actions.getByTestId('attempt').first();
  await expect(attempt.getByTestId('verify-target-note')).toContainText("covers only the FIRST event's data");
  await attempt.getByTestId('verify-secret').fill(SECRET);
  await attempt.getByTestId('verify-button').click();
  await expect(attempt.getByTestId('verify-result')).toHaveAttribute('data-status', 'match');
  await attempt.getByTestId('verify-sw-secret').fill(swSecret);
  await attempt.getByTestId('verify-sw-button').click();
  await expect(attempt.getByTestId('verify-sw-result')).toHaveAttribute('data-status', 'match');
  await expect(attempt.getByTestId('verify-sw-result')).toContainText('not checked for a stored attempt');
  await attempt.getByTestId('verify-sw-secret').fill('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
  await attempt.getByTestId('verify-sw-button').click();
  await expect(attempt.getByTestId('verify-sw-result')).toHaveAttribute('data-status', 'mismatch');

  // The other member, one click away; it links back to the batch delivery.
  const second = actions.getByTestId('batch-member-link');
  const secondId = await second.textContent();
  await second.click();
  await expect(detail).toHaveAttribute('data-call-id', secondId!.replace('#', ''));
  await expect(t('batch-membership')).toContainText('Item 2 of 2 in the Actions batch of orders');
  await t('batch-delivery-link').click();
  await expect(actions).toBeInViewport();

  // Replayed as the same PUT with the same array.
  await actions.getByTestId('replay-url').click();
  await expect(actions.getByTestId('attempt')).toHaveCount(2);
  const [, again] = await items.waitForRequests(2, 15_000);
  expect([again.method, again.body.toString('utf8')]).toEqual(['PUT', text]);
});

test('mock receivers: one made in the UI answers an Actions batch per item and checks webhook-signature; the inspector shows each item', async ({ page }) => {
  const source = (await lab.api<(SourceView & { writeKey: string })[]>('GET', '/sources')).find((s) => s.name === 'shop')!;
  const swSecret = source.webhooks.standardWebhooksSecret as string;
  await openApp(page, lab, 'compose');
  const t = (id: string) => page.getByTestId(id);
  await t('nav-receivers').click();
  await t('new-receiver').click();
  await t('rf-name').fill('items');
  await t('rf-path').fill('/items');
  await t('rf-item-statuses').fill('200, 500');
  await t('rf-sw-secret').fill(swSecret);
  await t('receiver-save').click();
  await expect(t('receiver-panel').locator('h2')).toHaveText('items');
  const receiver = (await lab.api<{ name: string; url: string; behavior: unknown; standardWebhooksSecret?: string }[]>('GET', '/receivers')).find((r) => r.name === 'items')!;
  expect([receiver.behavior, receiver.standardWebhooksSecret]).toEqual([{ itemStatuses: [200, 500] }, swSecret]);

  // The mapping now sends to it; two matching calls fill its batch of 2.
  const mappings = source.webhooks.mappings as { url: string }[];
  await lab.api('PATCH', `/sources/${source.id}`, { webhooks: { ...source.webhooks, mappings: [{ ...mappings[0], url: receiver.url }] } });
  const sent = await fetch(`${lab.collectorUrl}/v1/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}` },
    body: JSON.stringify({ batch: ['A', 'B'].map((x) => ({ type: 'track', event: `Order Placed ${x}`, userId: `items_${x}`, properties: { total: 1 } })) }),
  });
  expect(sent.status).toBe(200);
  await expect(t('receiver-count')).toHaveText('1');
  await t('receiver-requests-reload').click();
  await t('request-row').first().click();
  await expect(t('sw-verdict')).toHaveAttribute('data-state', 'valid');
  await expect(t('mock-response-text')).toContainText('answered 207');
  await expect(t('mock-response-text')).toContainText('per item: 200, 500');

  await t('nav-inspector').click();
  await row(page, 'Order Placed A').click();
  const actions = t('call-detail').locator('[data-testid="delivery"][data-kind="actions"]');
  await expect(actions.getByTestId('batch-item-status')).toHaveText(['200', '500']);
  await expect(actions.getByTestId('batch-member').nth(1)).toHaveAttribute('data-item-status', '500');
});

test('inspector: a large Actions batch shows its first items and pages the rest on demand; its members are listed a page at a time', async ({ page }) => {
  // 300 calls of about 2 KB in one batch: a 600 KB body, over the 64 KB a call's detail carries.
  const bulk = await lab.api<{ id: string; writeKey: string }>('POST', '/sources', {
    name: 'bulk',
    webhooks: { enabled: true, mode: 'actions', mappings: [{ name: 'all', trigger: {}, url: `${receivers.ok.url}/bulk`, method: 'POST', headers: {}, batchSize: 300 }] },
  });
  for (let i = 0; i < 300; i += 100) {
    const res = await fetch(`${lab.collectorUrl}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${bulk.writeKey}:`).toString('base64')}` },
      body: JSON.stringify({ batch: Array.from({ length: 100 }, (_, k) => ({ type: 'track', event: `Bulk ${i + k}`, userId: 'bulk', properties: { pad: 'x'.repeat(2000) } })) }),
    });
    expect(res.status).toBe(200);
  }
  // Every call delivered (in one batch, or more if the 5 s wait ended first on a busy machine).
  await expect.poll(async () => (await lab.api<{ deliveries: { delivered: number } }>('GET', `/stats?sourceId=${bulk.id}`)).deliveries.delivered, { timeout: 20_000 }).toBe(300);
  const first = (await lab.api<{ items: { id: number; label: string }[] }>('GET', '/messages?q=Bulk%200&limit=5')).items.find((c) => c.label === 'Bulk 0')!;
  const batch = (await lab.api<{ deliveries: { itemCount: number; bodyTruncated?: { items: number; shownItems: number } }[] }>('GET', `/messages/${first.id}`)).deliveries[0];
  expect(batch.bodyTruncated?.items).toBe(batch.itemCount);
  const shown = batch.bodyTruncated!.shownItems;

  await openApp(page, lab, 'inspector');
  const t = (id: string) => page.getByTestId(id);
  await t('filter-search').fill('Bulk 0');
  await row(page, 'Bulk 0').click();
  const actions = t('call-detail').locator('[data-testid="delivery"][data-kind="actions"]');
  const pages = actions.getByTestId('batch-body-pages');
  await expect(pages.getByTestId('batch-body-cut')).toContainText(`A batch of ${batch.itemCount} calls`);
  await expect(pages.getByTestId('batch-body-range')).toHaveText(`1–${shown}`);
  await expect(pages.getByTestId('delivery-body')).toContainText('Bulk 0');
  // Too large to edit or to copy whole here; Replay this request still sends it as stored.
  await expect(actions.getByTestId('edit-replay')).toBeDisabled();
  await expect(t('copy-body')).toHaveCount(0);
  await expect(actions.getByTestId('attempt').first().getByTestId('attempt-body')).toHaveCount(0);

  await pages.getByTestId('batch-body-next').click();
  await expect(pages.getByTestId('batch-body-range')).toHaveText(`${shown + 1}–${Math.min(shown + 50, batch.itemCount)}`);
  await expect(pages.getByTestId('delivery-body')).toContainText(`Bulk ${shown}`);
  await pages.getByTestId('batch-body-prev').click();
  await expect(pages.getByTestId('batch-body-range')).toHaveText(`1–${shown}`);
  await expect(pages.getByTestId('batch-body-prev')).toBeDisabled();

  // The members: the first 100 listed, the rest on demand.
  const members = actions.getByTestId('batch-members');
  await expect(members).toContainText(`batch of ${batch.itemCount} calls`);
  if (batch.itemCount > 100) {
    await expect(members.getByTestId('batch-member')).toHaveCount(100);
    await members.getByTestId('batch-members-more').click();
    await expect(members.getByTestId('batch-member')).toHaveCount(batch.itemCount);
    await expect(members.getByTestId('batch-members-more')).toHaveCount(0);
  }
});

test('inspector: a mapping whose body passes its limit shows that request failed, not sent, with the reason; the call\'s other request is delivered', async ({ page, consoleGuard }) => {
  consoleGuard.allow(/status of 409 \(Conflict\) \(.*\/api\/messages\/\d+\/replay/);
  const copies = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, { '@path': '$.' }]));
  const huge = await lab.api<{ id: string; writeKey: string }>('POST', '/sources', {
    name: 'huge',
    webhooks: {
      enabled: true,
      mode: 'actions',
      mappings: [
        { name: 'copies', trigger: {}, url: `${receivers.ok.url}/copies`, method: 'POST', headers: {}, data: copies },
        { name: 'id-only', trigger: {}, url: `${receivers.ok.url}/id`, method: 'POST', headers: {}, data: { id: { '@path': '$.messageId' } } },
      ],
    },
  });
  // A 30 KB call: 20 copies of it are some 600 KB.
  const res = await fetch(`${lab.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${huge.writeKey}:`).toString('base64')}` },
    body: JSON.stringify({ userId: 'big', event: 'Too Big', properties: { blob: 'x'.repeat(30_000) } }),
  });
  expect(res.status).toBe(200);
  await openApp(page, lab, 'inspector');
  const t = (id: string) => page.getByTestId(id);
  await row(page, 'Too Big').click();
  const copiesDelivery = t('call-detail').locator('[data-testid="delivery"][data-mapping="copies"]');
  await expect(copiesDelivery).toHaveAttribute('data-state', 'failed');
  await expect(copiesDelivery.getByTestId('url-not-sent')).toContainText('not sent: the mapped body passed its limit of');
  await expect(copiesDelivery.getByTestId('delivery-attempts')).toContainText('0 attempts');
  await expect(t('call-detail').locator('[data-testid="delivery"][data-mapping="id-only"]')).toHaveAttribute('data-state', 'delivered');
  // Replaying it as stored is refused with the reason.
  await copiesDelivery.getByTestId('replay-url').click();
  await expect(page.getByText(/was never sent \(its last error says why\), so there is no request to send again/)).toBeVisible();
});

test('destinations: an FQL trigger checked by Segment\'s parser as it is typed, against a sample call; a directive edited in the UI; the receiver gets what they select and make', async ({ page, consoleGuard }) => {
  consoleGuard.allow(/status of 400 \(Bad Request\) \(.*\/api\/actions\/check-trigger/);
  await openApp(page, lab, 'destinations');
  await createSource(page, 'fql');
  const t = (id: string) => page.getByTestId(id);
  await t('wh-mode').selectOption('actions');
  await t('wh-secret').fill(SECRET);
  await t('wh-add-mapping').click();
  await t('am-name-0').fill('pro-orders');
  // The conditions form shows its FQL; "Write as FQL" turns it into text.
  await expect(t('am-trigger-fql-0')).toContainText('every call');
  await t('am-fql-edit-0').click();
  await t('am-fql-0').fill('(type = "track"');
  await expect(t('error-webhooks.mappings[0].trigger')).toContainText('Segment\'s parser: not FQL it can read: check the parentheses');
  // Taken by Segment's parser but read otherwise than it looks: a warning, not an error (issue 37).
  await t('am-fql-0').fill('not (type = "track")');
  await expect(t('am-fql-warning-0')).toContainText('"not" is dropped');
  await expect(t('am-fql-warning-0')).toContainText('reads it as: type = "track"');
  await expect(t('error-webhooks.mappings[0].trigger')).toHaveCount(0);
  // The template menu's Order Completed has total 27.5.
  await t('am-fql-0').fill('type = "track" and properties.total > 30');
  await expect(t('am-fql-match-0')).toHaveText('does not match this sample call (Track: Order Completed)');
  await expect(t('error-webhooks.mappings[0].trigger')).toHaveCount(0);
  await t('am-fql-0').fill('type = "track" and properties.total > 20');
  await expect(t('am-fql-match-0')).toHaveText('matches this sample call (Track: Order Completed)');
  // `{{userId}}` in the URL makes it a template, resolved per call (issue 37, item 2).
  await t('am-url-0').fill(`${receivers.ok.url}/fql/{{userId}}`);
  await fillEditor(page, 'am-data-0', '{"event": {"@case": {"operator": "upper", "value": {"@path": "$.event"}}}, "note": {"@template": "{{properties.note}}"}}');
  await t('wh-save').click();
  await expect(t('toast-info').filter({ hasText: 'Webhooks settings saved' })).toBeVisible();
  const source = (await lab.api<(SourceView & { writeKey: string })[]>('GET', '/sources')).find((s) => s.name === 'fql')!;
  expect((source.webhooks.mappings as { trigger: unknown }[])[0].trigger).toBe('type = "track" and properties.total > 20');
  expect((source.webhooks.mappings as { url: unknown }[])[0].url).toEqual({ '@template': `${receivers.ok.url}/fql/{{userId}}` });

  // Kept across a reload, still as FQL.
  await page.reload();
  await t('source-item').filter({ hasText: 'fql' }).click();
  await expect(t('am-fql-0')).toHaveValue('type = "track" and properties.total > 20');
  await expect(t('am-url-0')).toHaveValue(`${receivers.ok.url}/fql/{{userId}}`);

  // Two calls: only the one with total > 20 is sent, its data made by the directive, raw template text.
  const before = receivers.ok.requests.length;
  const post = (total: number) =>
    fetch(`${lab.collectorUrl}/v1/track`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}` },
      body: JSON.stringify({ userId: 'u1', event: 'Order Completed', properties: { total, note: 'a&b <c>' } }),
    });
  expect((await post(5)).status).toBe(200);
  expect((await post(25)).status).toBe(200);
  await expect.poll(() => receivers.ok.requests.slice(before).filter((r) => r.url === '/fql/u1').length).toBe(1);
  const [got] = receivers.ok.requests.slice(before).filter((r) => r.url === '/fql/u1');
  expect(got.body.toString('utf8')).toBe('{"event":"ORDER COMPLETED","note":"a&b <c>"}');
  expect(got.headers['x-signature']).toBe(createHmac('sha1', SECRET).update(got.body).digest('hex'));
});
