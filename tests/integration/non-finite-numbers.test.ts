import { describe, expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';
import { openDbFile } from '../helpers/db-file';
import { NON_FINITE_REASON } from '../../src/shared/nesting';
import { NORMALIZE_VERSION } from '../../src/shared/normalize';

// A number JSON cannot carry (1e999: JSON.parse reads Infinity, JSON.stringify writes null) was taken
// with a 200, judged a number by a tracking plan, stored and forwarded as null: silent loss, found by
// a review. Normalization rules version 2 drop such a call saying where (strict mode: 400); the stored
// body keeps the text as sent. And a lone-surrogate messageId reads back well-formed in the detail too.

const KEY = 'wk_nonfinite';
const lab = testLab();

const config = (url: string) => ({ sources: [{ name: 'app', writeKey: KEY, webhooks: { enabled: true, urls: [{ url }] } }] });

describe('a number beyond what JSON can hold', () => {
  it('drops the call naming the field, forwards nothing, keeps the body as sent; in a batch only that call', async () => {
    const receiver = await lab.receiver();
    const engine = await lab.start({ config: config(`${receiver.url}/hook`) });
    expect((await engine.post('/v1/track', '{"userId":"u","event":"E","messageId":"m-1","properties":{"total":1e999,"n":[1,-1e400]}}', { writeKey: KEY })).status).toBe(200);
    const batch = '{"batch":[{"type":"track","userId":"u","event":"ok","messageId":"m-2"},{"type":"identify","userId":"u","messageId":"m-3","traits":{"t":[0,{"x":-1e999}]}}]}';
    expect((await engine.post('/v1/batch', batch, { writeKey: KEY })).status).toBe(200);
    // Past a batch's context, every call of it would carry the null: each is dropped, naming where.
    const envelope = '{"batch":[{"type":"track","userId":"u","event":"e","messageId":"m-4"}],"context":{"screen":{"density":1e999}}}';
    expect((await engine.post('/v1/batch', envelope, { writeKey: KEY })).status).toBe(200);

    const calls = (await engine.call('listMessages', { limit: 10 })).items;
    expect(calls.map((c) => [c.messageId, c.status, c.dropReason]).reverse()).toEqual([
      ['m-1', 'dropped', `properties.total: ${NON_FINITE_REASON}`],
      ['m-2', 'accepted', null],
      ['m-3', 'dropped', `traits.t[1].x: ${NON_FINITE_REASON}`],
      ['m-4', 'dropped', `context.screen.density: ${NON_FINITE_REASON}`],
    ]);
    const [sent] = await receiver.waitForRequests(1);
    expect(JSON.parse(sent!.body.toString()).messageId).toBe('m-2');
    // The request is stored as sent, 1e999 and all.
    const db = openDbFile(engine.dataDir);
    try {
      expect(db.prepare("SELECT count(*) FROM requests WHERE body LIKE '%\"total\":1e999%'").pluck().get()).toBe(1);
    } finally {
      db.close();
    }
    expect(receiver.requests).toHaveLength(1);
  });

  it('is refused with 400 naming the field in strict mode', async () => {
    const engine = await lab.start({ config: { sources: [{ name: 'app', writeKey: KEY }] }, overrides: { strict: true } });
    const r = await engine.post('/v1/track', '{"userId":"u","event":"E","properties":{"total":1e999}}', { writeKey: KEY });
    expect(r.status).toBe(400);
    expect(r.json.message).toContain(`properties.total: ${NON_FINITE_REASON}`);
  });
});

describe('normalization rules version 2', () => {
  it('stamps new calls with it, and shows a lone-surrogate messageId well-formed in the detail as in the list', async () => {
    const engine = await lab.start({ config: { sources: [{ name: 'app', writeKey: KEY }] } });
    expect(NORMALIZE_VERSION).toBe(2);
    await engine.post('/v1/track', { userId: 'u', event: 'once', messageId: 'lone-\ud800' }, { writeKey: KEY });
    const [c] = (await engine.call('listMessages', { limit: 1 })).items;
    const detail = await engine.call('getMessage', { id: c!.id });
    expect([c!.messageId, detail.call.normalized?.messageId]).toEqual(['lone-\ufffd', 'lone-\ufffd']);
  });
});
