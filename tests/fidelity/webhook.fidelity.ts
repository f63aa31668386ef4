import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { waitFor, type TestEngine } from '../helpers/engine';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';
import type { CallDetail, NormalizedCall } from '../../src/shared/types';
import { mulberry32 } from '../../src/main/engine/seeded-random';

// The differential test of issue 23: Segment's real Webhooks (Actions) destination
// (@segment/action-destinations' `webhook`: its `perform` and `performBatch`, run by its own
// actions-core Destination, with its trigger decided by its destination-subscriptions) and the lab,
// on the same seeded calls and mappings, over real local HTTP. For every call and mapping: both send
// nothing, or both send the same method, URL path, body bytes, X-Signature and header set (names
// case-insensitive; host and connection excepted: the ports differ and so may the connection's
// keep-alive). A difference fails with both requests printed.
//
// Segment's packages live in tests/fidelity/node_modules (npm run test:fidelity installs them from
// tests/fidelity/package-lock.json), apart from the lab's own, whose copy the lab uses.

const req = createRequire(import.meta.url);
/* eslint-disable @typescript-eslint/no-explicit-any */
const webhook = req('@segment/action-destinations/dist/destinations/webhook').default;
const { Destination } = req('@segment/actions-core') as { Destination: new (d: unknown) => any };
const subs = req('@segment/destination-subscriptions') as { parseFql(f: string): any; validate(ast: any, e: unknown): boolean };
/* eslint-enable @typescript-eslint/no-explicit-any */

const SEED = Number(process.env.FUZZ_SEED ?? 23);
const EVENTS = Number(process.env.FIDELITY_EVENTS ?? 60);
const SECRET = 'fidelity-secret';

interface MappingCase {
  trigger: string;
  /** Appended to the mapping's URL, as typed (a URL Segment's validation refuses: nothing sent). */
  suffix?: string;
  data?: unknown;
  headers?: Record<string, unknown>;
  method?: 'POST' | 'PUT' | 'PATCH';
  /** The mapping's url made from the receiver's base and path (a directive resolved per call, issue 37 item 2). */
  urlOf?: (base: string) => unknown;
}

// Every directive, templates over text with & < > " ' = / and non-ASCII, falsy values, missing
// paths, arrays, data that is not an object or resolves to nothing, replaced headers, FQL on
// properties, traits and context.
const MAPPINGS: MappingCase[] = [
  { trigger: '' },
  { trigger: 'type = "track"', data: { t: { '@template': '{{properties.text}} / {{traits.name}} / {{properties.missing}}' }, raw: { '@template': '{{{properties.text}}}' } } },
  { trigger: 'type = "track" and properties.plan = "pro"', data: { p: { '@path': '$.properties.plan' }, zero: { '@path': '$.properties.zero' }, past: { '@path': '$.properties.zero.x' }, no: { '@path': '$.properties.no' }, len: { '@path': '$.properties.items.length' }, bare: { '@path': 'properties.text' } } },
  { trigger: 'contains(event, "Order")', data: { tier: { '@if': { exists: { '@path': '$.properties.coupon' }, then: { '@path': '$.properties.coupon' }, else: 'none' } }, blank: { '@if': { blank: { '@path': '$.properties.text' }, then: 'blank', else: 'text' } } } },
  { trigger: 'traits.email exists', data: { email: { '@case': { operator: 'lower', value: { '@path': '$.traits.email' } } }, slug: { '@replace': { pattern: '/', replacement: '-', value: { '@path': '$.properties.text' } } } } },
  { trigger: 'context.library.name = "analytics.js"', data: { skus: { '@arrayPath': ['$.properties.items', { id: { '@path': '$.sku' }, p: { '@path': '$.price' } }] }, all: { '@arrayPath': ['$.properties.items'] } } },
  { trigger: 'properties.total > 10', data: { flat: { '@flatten': { value: { '@path': '$.properties' }, separator: '.' } } } },
  { trigger: 'type != "identify"', data: { j: { '@json': { mode: 'encode', value: { '@path': '$.properties' } } } } },
  { trigger: 'match(userId, "u-1*")', data: { who: { '@merge': { direction: 'right', objects: [{ id: 'anon', plan: 'free' }, { id: { '@path': '$.userId' }, plan: { '@path': '$.properties.plan' } }] } } } },
  { trigger: '(type = "page" or type = "screen")', data: { out: { '@transform': { apply: { n: { '@path': '$.name' } }, mapping: { name: { '@path': '$.n' } } } } } },
  { trigger: 'name exists', data: { x: { '@excludeWhenNull': { coupon: { '@path': '$.properties.coupon' }, name: { '@path': '$.name' }, z: null } } } },
  { trigger: 'type = "track"', data: { l: { '@liquid': '{{ properties.plan | upcase }}-{{ traits.name | size }}-{{ properties.text | escape }}' } } },
  { trigger: 'type = "group"', data: { '@path': '$.traits.name' } },
  { trigger: '', data: { '@path': '$.properties.missing' } },
  { trigger: '', data: { '@path': '$.properties' }, headers: { 'X-Zed': 'z', 'X-Api-Key': 'k', 'b-low': 'b', 'User-Agent': 'custom/1', Accept: 'text/plain' }, method: 'PUT' },
  { trigger: 'properties.plan != "pro"', data: { arr: [{ '@path': '$.userId' }, 'lit', { '@path': '$.properties.missing' }, 0, false, null], nested: { deep: { v: { '@path': '$.properties.no' } } } }, method: 'PATCH' },
  { trigger: 'event = "Order Completed"', data: { '@template': '{{properties.text}}' } },
  { trigger: 'traits.plan = "pro" or properties.plan = "pro"', data: { '@path': '$.properties.maybe' }, headers: { 'X-Signature': 'forged', 'Accept-Encoding': 'identity' } },
  // Issue 37: `>=` and `<=` (the lab refused them); the text `undefined` as a header value (Segment's
  // client removes that header, its own of the name too).
  { trigger: 'properties.total >= 10 and properties.total <= 20', data: { t: { '@path': '$.properties.total' } } },
  { trigger: 'type = "identify"', data: { '@path': '$.traits' }, headers: { 'X-Gone': 'undefined', 'X-Keep': 'k', 'User-Agent': 'undefined', 'X-Signature': 'undefined' } },
  // A URL that is no valid URI (non-ASCII, a space): Segment's payload validation refuses it, nothing sent.
  { trigger: 'type = "track"', suffix: '/wébhook/日本?c=ü', data: { e: { '@path': '$.event' } } },
  { trigger: 'type = "page"', suffix: '/a b', data: { n: { '@path': '$.name' } } },
  // Issue 37, item 2: directives in the url and in header values, resolved per call; a value that
  // resolves to nothing leaves its header out; a URL resolving to text that is no valid URI (a
  // property with non-ASCII text), or to nothing, is refused by Segment's validation: nothing sent.
  { trigger: 'type = "track"', urlOf: (b) => ({ '@template': `${b}/u/{{userId}}` }), headers: { 'X-User': { '@path': '$.userId' }, 'X-None': { '@path': '$.properties.missing' }, 'X-Total': { '@path': '$.properties.total' }, 'X-Plan': { '@template': 'plan-{{properties.plan}}' } }, data: { e: { '@path': '$.event' } } },
  { trigger: 'type != "track"', urlOf: (b) => ({ '@template': `${b}/t?text={{properties.text}}` }), data: { t: { '@path': '$.type' } } },
  { trigger: 'type = "identify" or type = "group"', urlOf: () => ({ '@path': '$.traits.nowhere' }), data: { t: { '@path': '$.type' } } },
  { trigger: 'type = "track" or type = "identify"', data: { q: { '@path': "$.properties['text']" }, d: { '@path': "$.context['library'].name" }, i: { '@path': '$.properties.items[0].sku' }, proto: { '@path': '$.properties.text.length' }, t: { '@template': '{{properties.items[1].sku}}|{{traits.name.length}}' } } },
];

// Batched: the whole event, and data that is sometimes not an object (those items are left out).
const BATCH_MAPPINGS: MappingCase[] = [
  { trigger: '' },
  { trigger: '', data: { '@path': '$.properties.maybe' } },
];

const TEXTS = ['a & b', '<tag attr="x">', "it's = /path/", 'é 日本 🙂', '', 'plain', 'x=1&y=<2>', "'quoted'"];

function makeEvents(n: number, rnd: () => number) {
  const pick = <T,>(a: readonly T[]) => a[Math.floor(rnd() * a.length)];
  const out: { type: string; body: Record<string, unknown> }[] = [];
  for (let i = 0; i < n; i++) {
    const type = pick(['track', 'track', 'track', 'identify', 'page', 'screen', 'group'] as const);
    const properties: Record<string, unknown> = {
      text: pick(TEXTS),
      zero: 0,
      no: false,
      total: Math.floor(rnd() * 30),
      items: Array.from({ length: Math.floor(rnd() * 3) }, (_, k) => ({ sku: `S-${i}-${k}`, price: k + 0.5 })),
    };
    const plan = pick(['pro', 'free', undefined]);
    if (plan) properties.plan = plan;
    const coupon = pick([null, 'SAVE10', undefined]);
    if (coupon !== undefined) properties.coupon = coupon;
    const maybe = pick([{ k: pick(TEXTS) }, 'a string', 7, undefined]);
    if (maybe !== undefined) properties.maybe = maybe;
    const traits: Record<string, unknown> = { name: pick(TEXTS) };
    if (rnd() < 0.5) traits.email = `User${i}@Example.COM`;
    if (rnd() < 0.3) traits.plan = 'pro';
    const body: Record<string, unknown> = {
      userId: pick(['u-1', 'u-12', 'v-2']) + (rnd() < 0.5 ? `-${i}` : ''),
      context: { library: { name: pick(['analytics.js', 'analytics-node']), version: '1' } },
    };
    if (type === 'track') Object.assign(body, { event: pick(['Order Completed', 'Signed Up', 'Order Refunded']), properties });
    if (type === 'identify') Object.assign(body, { traits });
    if (type === 'page' || type === 'screen') Object.assign(body, { name: pick(['Home', 'Checkout']), properties });
    if (type === 'group') Object.assign(body, { groupId: `g-${i}`, traits });
    if (type === 'track' && rnd() < 0.7) (body.context as Record<string, unknown>).traits = traits;
    if (type === 'track') body.traits = traits;
    out.push({ type, body });
  }
  return out;
}

interface Captured {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

const captured = (r: ReceivedRequest): Captured => {
  const headers: Record<string, string> = {};
  for (let i = 0; i < r.rawHeaders.length; i += 2) {
    const name = r.rawHeaders[i].toLowerCase();
    if (name !== 'host' && name !== 'connection') headers[name] = r.rawHeaders[i + 1];
  }
  return { method: r.method, path: r.url, headers, body: r.body.toString('utf8') };
};

const cut = (body: string) => (body.length > 1500 ? `${body.slice(0, 1500)}… (${body.length} characters)` : body);
const show = (c: Captured | undefined) => (c ? `${c.method} ${c.path}\n${Object.entries(c.headers).map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${cut(c.body)}` : '(nothing sent)');

function mappingFor(m: MappingCase, base: string, batch?: number): Record<string, unknown> {
  // Segment's mapping as its subscription holds it: `data` has the field's default when left empty.
  return { url: m.urlOf ? m.urlOf(base) : base, method: m.method ?? 'POST', headers: m.headers ?? {}, data: m.data ?? { '@path': '$.' }, ...(batch ? { batch_size: batch } : {}) };
}

function labMapping(m: MappingCase, name: string, base: string, batchSize?: number) {
  // Every call is the object form with no condition (Segment's parser refuses empty FQL, and so does the lab).
  return { name, trigger: m.trigger.trim() === '' ? {} : m.trigger, url: m.urlOf ? m.urlOf(base) : base, method: m.method ?? 'POST', headers: m.headers ?? {}, ...(m.data === undefined ? {} : { data: m.data }), ...(batchSize ? { batchSize } : {}) };
}

function segmentTakes(trigger: string, call: NormalizedCall): boolean {
  if (trigger.trim() === '') return true;
  const ast = subs.parseFql(trigger);
  if (ast.error) throw new Error(`Segment's parser refused ${trigger}: ${ast.error.message}`);
  return subs.validate(ast, call);
}

async function detailOf(t: TestEngine, messageId: string): Promise<CallDetail> {
  return waitFor(async () => {
    const c = (await t.call('listMessages', { q: messageId, limit: 5 })).items.find((x) => x.messageId === messageId);
    return c ? t.call('getMessage', { id: c.id }) : undefined;
  }, `call ${messageId}`);
}

const lab = testLab();

describe("the lab against Segment's real Webhooks (Actions) destination", () => {
  it(`sends what it sends, on ${EVENTS} seeded calls × ${MAPPINGS.length} mappings and ${BATCH_MAPPINGS.length} batches (FUZZ_SEED=${SEED})`, async () => {
    process.stdout.write(`fidelity: FUZZ_SEED=${SEED} FIDELITY_EVENTS=${EVENTS}\n`);
    const rnd = mulberry32(SEED);
    const events = makeEvents(EVENTS, rnd);
    const labRecv = await lab.receiver();
    const segRecv: TestReceiver = await startReceiver();
    try {
      const groups: MappingCase[][] = [];
      for (let i = 0; i < MAPPINGS.length; i += 5) groups.push(MAPPINGS.slice(i, i + 5));
      const sources = groups.map((g, k) => ({
        name: `fid-${k}`,
        writeKey: `wk_fid_${k}`,
        webhooks: { enabled: true, mode: 'actions', sharedSecret: SECRET, urls: [], mappings: g.map((m, j) => labMapping(m, `m${k * 5 + j}`, `${labRecv.url}/m${k * 5 + j}${m.suffix ?? ''}`)) },
      }));
      sources.push({
        name: 'fid-batch',
        writeKey: 'wk_fid_batch',
        webhooks: { enabled: true, mode: 'actions', sharedSecret: SECRET, urls: [], mappings: BATCH_MAPPINGS.map((m, j) => labMapping(m, `b${j}`, `${labRecv.url}/b${j}`, EVENTS)) },
      });
      const t = await lab.start({ config: { sources } });
      const destination = new Destination(webhook);
      const differences: string[] = [];
      let compared = 0;
      let bothSilent = 0;
      const compare = (what: string, seg: Captured | undefined, ours: Captured | undefined) => {
        compared++;
        if (!seg && !ours) return void bothSilent++;
        const same =
          seg && ours && seg.method === ours.method && seg.path === ours.path && seg.body === ours.body &&
          JSON.stringify(Object.entries(seg.headers).sort()) === JSON.stringify(Object.entries(ours.headers).sort());
        if (!same) differences.push(`${what}\n--- Segment's destination:\n${show(seg)}\n--- the lab:\n${show(ours)}`);
      };

      const batchCalls: NormalizedCall[] = [];
      for (const [i, e] of events.entries()) {
        for (const [k, group] of groups.entries()) {
          const messageId = `e${i}-s${k}`;
          const before = labRecv.requests.length;
          expect((await t.post(`/v1/${e.type}`, { ...e.body, messageId }, { writeKey: `wk_fid_${k}` })).status).toBe(200);
          const detail = await detailOf(t, messageId);
          const call = detail.call.normalized!;
          const expected = new Map<string, Captured | undefined>();
          for (const [j, m] of group.entries()) {
            const n = k * 5 + j;
            if (!segmentTakes(m.trigger, call)) continue;
            const segBefore = segRecv.requests.length;
            try {
              await destination.executeAction('send', { event: call, mapping: mappingFor(m, `${segRecv.url}/m${n}${m.suffix ?? ''}`), settings: { sharedSecret: SECRET } });
            } catch {
              // Refused (a 400 for data that is not an object): nothing was sent.
            }
            expected.set(`/m${n}`, segRecv.requests.length > segBefore ? captured(segRecv.requests[segRecv.requests.length - 1]) : undefined);
          }
          const sent = [...expected.values()].filter(Boolean).length;
          // Every Actions delivery of the call over (sent or failed unsent), then the requests that came.
          await waitFor(async () => {
            const d = await t.call('getMessage', { id: detail.call.id });
            const actions = d.deliveries.filter((x) => x.kind === 'actions');
            return actions.length === expected.size && actions.every((x) => x.state === 'delivered' || x.state === 'failed') ? d : undefined;
          }, `the lab's deliveries of ${messageId}`);
          const arrived = labRecv.requests.slice(before).map(captured);
          if (arrived.length !== sent) differences.push(`${messageId}: Segment sent ${sent} request(s), the lab ${arrived.length}: ${arrived.map((a) => a.path).join(', ')}`);
          // A mapping's requests go under its own path (/m3), a directive URL's below it (/m3/u/u-1).
          const under = (a: Captured, path: string) => a.path === path || a.path.startsWith(`${path}/`) || a.path.startsWith(`${path}?`);
          for (const [path, seg] of expected) compare(`${messageId} ${path} (${e.type})`, seg, arrived.find((a) => under(a, path)));
        }
      }

      // The batch source's calls, posted one right after another so that the batch fills (the lab
      // also sends a batch 5 s after its first call), then read back as the lab normalized them.
      const labBefore = labRecv.requests.length;
      for (const [i, e] of events.entries()) {
        expect((await t.post(`/v1/${e.type}`, { ...e.body, messageId: `e${i}-b` }, { writeKey: 'wk_fid_batch' })).status).toBe(200);
      }
      for (const i of events.keys()) batchCalls.push((await detailOf(t, `e${i}-b`)).call.normalized!);

      // The batches: Segment's executeBatch on the same calls in the same order (an item whose data is
      // not an object is answered 400 in its multistatus and left out, as the lab leaves it out).
      for (const [j, m] of BATCH_MAPPINGS.entries()) {
        const segBefore = segRecv.requests.length;
        await destination.executeBatch('send', { events: batchCalls, mapping: mappingFor(m, `${segRecv.url}/b${j}`, EVENTS), settings: { sharedSecret: SECRET } });
        const seg = segRecv.requests.length > segBefore ? captured(segRecv.requests[segRecv.requests.length - 1]) : undefined;
        // The lab sends a batch when full or 5 s after its first call.
        const ours = await waitFor(() => labRecv.requests.slice(labBefore).map(captured).find((r) => r.path === `/b${j}`), `the lab's batch b${j}`, 15_000);
        compare(`batch b${j} of ${batchCalls.length} calls`, seg, ours);
      }

      process.stdout.write(`fidelity: ${compared} call × mapping pairs compared (${bothSilent} where neither sent), ${differences.length} differences\n`);
      expect(compared).toBeGreaterThanOrEqual(200);
      expect(differences, differences.slice(0, 5).join('\n\n=====\n\n')).toEqual([]);
    } finally {
      await segRecv.close();
    }
  });
});
