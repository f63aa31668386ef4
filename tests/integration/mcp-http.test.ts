import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { testLab } from '../helpers/test-lab';
import { waitFor, type TestEngine } from '../helpers/engine';
import { callTool, httpMcpClient, structured, textOf, TOOL_NAMES } from '../helpers/mcp';
import type { TestReceiver } from '../helpers/receiver';
import type { CallDetail, CallSummary, Page } from '../../src/shared/types';
import type { ProbeReport } from '../../src/shared/probe.contract';
import type { VerifySignatureResult } from '../../src/shared/signature-verify.contract';

// `webhook-lab mcp` over Streamable HTTP at /mcp (issue 39), driven as an agent drives it: the SDK's
// own Client against a real engine and its control server, every tool called, secrets kept.

const lab = testLab();
const TOKEN = 'mcp-http-token-0123456789';
const SHARED = 'mcp-shared-s3cret';
const PASSWORD = 'url-pa55word';
const OLD = `whsec_${Buffer.from('the old key, 24 bytes!!!').toString('base64')}`;
const NEW = `whsec_${Buffer.from('the new key, 24 bytes!!!').toString('base64')}`;

interface Setup {
  t: TestEngine;
  rx: TestReceiver;
  base: string;
  client: Client;
}

async function setup(handler?: Parameters<typeof lab.receiver>[0]): Promise<Setup> {
  const rx = await lab.receiver(handler);
  const t = await lab.start({
    config: {
      sources: [
        {
          name: 'checkout',
          writeKey: 'wk_mcp_checkout',
          webhooks: { enabled: true, sharedSecret: SHARED, standardWebhooksSecret: OLD, urls: [{ url: `http://bob:${PASSWORD}@127.0.0.1:${rx.port}/hook`, headers: {} }] },
        },
      ],
    },
  });
  const server = await lab.controlServer(t, TOKEN);
  const client = await httpMcpClient(server.url, TOKEN);
  return { t, rx, base: server.url, client };
}

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('webhook-lab mcp over Streamable HTTP (/mcp)', () => {
  it('lists the twelve tools with their annotations and output schemas, and each one answers; no secret and no token in any answer', async () => {
    const { client, rx, base, t } = await setup();
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name).sort()).toEqual([...TOOL_NAMES].sort());
      const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
      for (const name of ['get_lab', 'list_sources', 'list_calls', 'get_call', 'wait_for_call', 'list_violations', 'explain_call', 'verify_signature']) {
        expect(byName[name].annotations?.readOnlyHint, name).toBe(true);
      }
      expect(byName.send_call.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
      for (const name of ['replay_call', 'retry_failed', 'check_receiver']) {
        expect(byName[name].annotations, name).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
      }
      for (const x of tools) expect(x.outputSchema?.type, x.name).toBe('object');
      expect(byName.get_call.inputSchema.required).toEqual(['id']);

      const answers: string[] = [];
      const keep = <T>(v: T) => (answers.push(JSON.stringify(v)), v);

      const labInfo = keep(await structured<{ collectorUrl: string; uiUrl: string; sources: { name: string; writeKey: string; urls: string[] }[] }>(client, 'get_lab'));
      expect(labInfo.collectorUrl).toBe(t.collectorUrl);
      expect(labInfo.uiUrl).toBe(base);
      expect(labInfo.sources).toEqual([{ id: expect.any(String), name: 'checkout', writeKey: 'wk_mcp_checkout', webhooksEnabled: true, urls: [`http://bob:****@127.0.0.1:${rx.port}/hook`] }]);

      const sources = keep(await structured<{ items: { webhooks: { sharedSecret: string; standardWebhooksSecret: string } }[]; total: number; next: null }>(client, 'list_sources'));
      expect(sources.total).toBe(1);
      expect(sources.items[0].webhooks.sharedSecret).toBe('****');
      expect(sources.items[0].webhooks.standardWebhooksSecret).toBe('whsec_****');

      const big = 'x'.repeat(20_000);
      const sent = keep(await structured<{ status: number; call: CallSummary }>(client, 'send_call', { source: 'checkout', call: { type: 'track', event: 'Order Completed', userId: 'u_1', properties: { total: 42, big } } }));
      expect(sent.status).toBe(200);
      expect(sent.call.status).toBe('accepted');
      const id = sent.call.id;
      await rx.waitForRequests(1, 20_000);

      const delivered = await waitFor(async () => {
        const d = (await structured<{ call: CallDetail }>(client, 'get_call', { id })).call;
        return d.deliveries[0]?.state === 'delivered' ? d : null;
      }, 'the call delivered', 20_000);
      keep(delivered);
      const raw = delivered.call.raw as { event: string; properties: { total: number; big: string } };
      expect(raw.event).toBe('Order Completed');
      expect(raw.properties.total).toBe(42);
      // Cut at 16 KB, with the marker and the call's permalink.
      expect(raw.properties.big.length).toBeLessThan(17_000);
      expect(raw.properties.big).toContain(`[cut: ${20_000 - 16_384} more characters; the whole of it: ${base}/#/inspector/${id}]`);
      expect(delivered.deliveries[0].attempts[0].responseStatus).toBe(200);
      expect(delivered.deliveries[0].urls[0].url).toBe(`http://bob:****@127.0.0.1:${rx.port}/hook`);

      const list = keep(await structured<Page<CallSummary>>(client, 'list_calls', { type: 'track' }));
      expect(list.items.map((c) => c.id)).toEqual([id]);
      expect(list.total).toBe(1);

      const explained = keep(await structured<{ outcome: string; explanation: string[] }>(client, 'explain_call', { id }));
      expect(explained.outcome).toBe('delivered');
      expect(explained.explanation.join(' ')).toMatch(/was delivered/);

      const waited = keep(await structured<{ call: CallDetail }>(client, 'wait_for_call', { match: { type: 'track', event: 'Order Completed', properties: { total: 42 } } }));
      expect(waited.call.call.id).toBe(id);

      const replayed = keep(await structured<{ deliveryId: number; attempts: { trigger: string; responseStatus: number }[] }>(client, 'replay_call', { id }));
      expect(replayed.attempts.length).toBeGreaterThan(0);
      expect(replayed.attempts[0].responseStatus).toBe(200);

      const retried = keep(await structured<{ matched: number; retried: number; dryRun: boolean }>(client, 'retry_failed', {}));
      expect(retried).toEqual({ matched: 0, retried: 0, dryRun: true });

      const violations = keep(await structured<{ items: unknown[]; total: number }>(client, 'list_violations', {}));
      expect(violations).toEqual({ items: [], total: 0, next: null });

      // The exact bytes and signature the receiver got.
      const got = rx.requests[0];
      const verified = keep(await structured<VerifySignatureResult>(client, 'verify_signature', { body: got.body.toString('utf8'), xSignature: String(got.headers['x-signature']), source: 'checkout' }));
      expect(verified.classic).toMatchObject({ state: 'valid', matched: { version: 1, current: true, given: false } });
      // No signing oracle (found by a review): the HMAC a source's own secret gives a chosen body is never answered.
      const forged = '{"type":"track","event":"Refund Issued"}';
      const real = createHmac('sha1', SHARED).update(forged).digest('hex');
      const probe = keep(await structured<VerifySignatureResult>(client, 'verify_signature', { body: forged, xSignature: '0'.repeat(40), source: 'checkout' }));
      expect(probe.classic).toMatchObject({ state: 'invalid', expected: null });
      expect(JSON.stringify(probe)).not.toContain(real);
      // Given the secret, the caller may see what it gives.
      const given = await structured<VerifySignatureResult>(client, 'verify_signature', { body: forged, xSignature: '0'.repeat(40), secret: SHARED });
      expect(given.classic!.expected).toBe(real);

      const report = keep(await structured<ProbeReport>(client, 'check_receiver', { url: `${rx.url}/hook`, secret: SHARED, only: ['transport'] }));
      expect(report.state).toBe('done');
      // Plain http: the transport check passes with a warning (no TLS).
      expect(report.ok).toBe(true);
      expect(report.checks.filter((c) => c.verdict !== 'skipped').map((c) => [c.name, c.verdict])).toEqual([['transport', 'warn']]);

      const all = answers.join('\n');
      for (const secret of [TOKEN, SHARED, PASSWORD, OLD]) expect(all).not.toContain(secret);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('wait_for_call resolves with a call that arrives after the wait began; a miss is isError with the closest calls and their diff', async () => {
    const { client, t } = await setup();
    try {
      await t.post('/v1/track', { userId: 'u_1', event: 'Order Completed', properties: { total: 41 } }, { writeKey: 'wk_mcp_checkout' });
      // The wait has begun once it read the calls (a spy around the engine's real handler).
      let reads = 0;
      const handlers = t.engine.handlers as unknown as Record<string, (i: unknown) => unknown>;
      const real = handlers.listMessageDetails;
      handlers.listMessageDetails = (i) => (reads++, real(i));
      const waiting = callTool(client, 'wait_for_call', { match: { event: 'Order Completed', properties: { total: 42 } }, timeoutMs: 60_000 });
      await waitFor(() => reads > 0, 'the wait to read the calls', 20_000);
      const before = Date.now();
      await t.post('/v1/track', { userId: 'u_1', event: 'Order Completed', properties: { total: 42 } }, { writeKey: 'wk_mcp_checkout' });
      const found = (await waiting).structuredContent as { call: CallDetail };
      expect((found.call.call.raw as { properties: { total: number } }).properties.total).toBe(42);
      expect(Date.parse(found.call.call.receivedAt)).toBeGreaterThanOrEqual(before - 1000);

      const miss = await callTool(client, 'wait_for_call', { match: { event: 'Order Completed', properties: { total: 43 } }, timeoutMs: 300 }, { allowError: true });
      expect(miss.isError).toBe(true);
      const text = textOf(miss);
      expect(text).toMatch(/no calls matched within 300 ms/);
      expect(text).toMatch(/the closest 2 of 2 received/);
      expect(text).toMatch(/properties\.total\n\s+- expected 43\n\s+\+ received 42/);

      // A match is bounded (found by a review: one of 50,000 keys held the lab for a minute): refused at once, naming it.
      const huge = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]));
      const refused = await callTool(client, 'wait_for_call', { match: huge, timeoutMs: 1000 }, { allowError: true });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/at most 16 KB of JSON/);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('check_receiver: a receiver whose signature check lets a wrong signature through fails `signature`, with progress notifications to a client that asked', async () => {
    // Checks only that an X-Signature header is there, never its value.
    const { client, rx } = await setup((req, res) => res.writeHead(req.headers['x-signature'] ? 200 : 401).end());
    try {
      const progress: { progress: number; total?: number }[] = [];
      const r = await client.callTool({ name: 'check_receiver', arguments: { url: `${rx.url}/hook`, secret: SHARED, only: ['call-types', 'signature'] } }, undefined, {
        timeout: 100_000,
        onprogress: (p) => progress.push(p),
      });
      const report = r.structuredContent as ProbeReport;
      expect(report.ok).toBe(false);
      const signature = report.checks.find((c) => c.name === 'signature')!;
      expect(signature.verdict).toBe('fail');
      expect(textOf(r as never)).toMatch(/FAIL signature/);
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.at(-1)).toMatchObject({ progress: report.checks.length, total: report.checks.length });
      expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
    } finally {
      await client.close();
    }
  }, 120_000);

  it('verify_signature names the version that made each webhook-signature after a rotation', async () => {
    const { client, rx, t } = await setup();
    try {
      const [source] = await t.call('listSources', {});
      await t.call('rotateSecret', { id: source.id, which: 'standardWebhooksSecret', secret: NEW });
      await t.post('/v1/track', { userId: 'u_1', event: 'Rotated' }, { writeKey: 'wk_mcp_checkout' });
      const [got] = await rx.waitForRequests(1, 20_000);
      const signatures = String(got.headers['webhook-signature']);
      expect(signatures.split(' ')).toHaveLength(2);
      const input = { body: got.body.toString('utf8'), webhookId: String(got.headers['webhook-id']), webhookTimestamp: String(got.headers['webhook-timestamp']), webhookSignature: signatures };

      const bySource = await structured<VerifySignatureResult>(client, 'verify_signature', { ...input, source: 'checkout' });
      expect(bySource.standardWebhooks?.state).toBe('valid');
      expect(bySource.standardWebhooks?.signatures.map((s) => s.matched)).toEqual([
        { version: 2, current: true, given: false },
        { version: 1, current: false, given: false },
      ]);
      expect(bySource.versionsTried.standardWebhooksSecret).toEqual([2, 1]);
      expect(bySource.standardWebhooks?.signed).toContain(`"${input.webhookId}.${input.webhookTimestamp}."`);

      // A receiver still holding the old secret: its signature is the second, version 1.
      const old = await callTool(client, 'verify_signature', { ...input, standardWebhooksSecret: OLD, source: 'checkout' });
      const r = old.structuredContent as VerifySignatureResult;
      expect(r.standardWebhooks?.matched).toEqual({ version: 1, current: false, given: true });
      expect(textOf(old)).toMatch(/signature 2: matches version 1 \(not current\), the secret given/);
      expect(JSON.stringify(old)).not.toContain(OLD);

      const wrong = await structured<VerifySignatureResult>(client, 'verify_signature', { ...input, standardWebhooksSecret: `whsec_${Buffer.from('another key of 24 bytes!').toString('base64')}` });
      expect(wrong.standardWebhooks?.state).toBe('invalid');
      expect(wrong.standardWebhooks?.signatures.every((s) => s.matched === null)).toBe(true);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('verify_signature checks an attempt by its id: the exact bytes the lab sent, though get_call cut and masked them', async () => {
    const { client, rx, t } = await setup();
    try {
      // Over 16 KB, with a URL password inside: get_call's copy of the body is cut and masked.
      await t.post('/v1/track', { userId: 'u_1', event: 'Large', properties: { link: `https://ann:${PASSWORD}@shop.example/`, pad: 'x'.repeat(20_000) } }, { writeKey: 'wk_mcp_checkout' });
      await rx.waitForRequests(1, 20_000);
      const id = (await t.call('listMessages', {})).items[0].id;
      const { call } = await waitFor(async () => {
        const r = await structured<{ call: CallDetail }>(client, 'get_call', { id });
        // Recorded (an attempt whose round is still out has a provisional id below 1).
        return (r.call.deliveries[0]?.attempts[0]?.id ?? 0) > 0 ? r : null;
      }, 'the attempt recorded', 20_000);
      const delivery = call.deliveries[0];
      expect(delivery.body).toMatch(/\[cut: \d+ more characters/);
      expect(delivery.body).not.toContain(PASSWORD);
      const attemptId = delivery.attempts[0].id;

      // The agent's copy would not verify; the attempt's id does, against the source's kept secrets.
      const copied = await structured<VerifySignatureResult>(client, 'verify_signature', { body: delivery.body, xSignature: delivery.attempts[0].signature!, source: 'checkout' });
      expect(copied.classic?.state).toBe('invalid');
      const byId = await structured<VerifySignatureResult>(client, 'verify_signature', { callId: id, attemptId });
      expect(byId.classic).toMatchObject({ state: 'valid', matched: { version: 1, current: true, given: false } });
      expect(byId.classic?.signed).toMatch(/the body's 2\d{4} bytes/);
      expect(byId.standardWebhooks?.state).toBe('valid');
      // The receiver's secret given: it is what is checked.
      const wrong = await structured<VerifySignatureResult>(client, 'verify_signature', { callId: id, attemptId, secret: 'what-the-receiver-holds' });
      expect(wrong.classic).toMatchObject({ state: 'invalid', matched: null });
      const missing = await callTool(client, 'verify_signature', { callId: id, attemptId: attemptId + 1000 }, { allowError: true });
      expect(missing.isError).toBe(true);
      expect(textOf(missing)).toBe(`not found: attempt ${attemptId + 1000} of call ${id}`);
      const half = await callTool(client, 'verify_signature', { attemptId }, { allowError: true });
      expect(half.isError).toBe(true);
      expect(textOf(half)).toMatch(/callId and attemptId together/);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('send_call: a call the collector refuses is a tool error in its words, one it stores as dropped says why; list_calls takes a source by name', async () => {
    const { client, t } = await setup();
    try {
      const refused = await callTool(client, 'send_call', { source: 'checkout', call: { type: 'track', event: 'Big', userId: 'u_1', properties: { pad: 'x'.repeat(40_000) } } }, { allowError: true });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^the collector refused the call with 400: .*32 KB.*; nothing was stored$/);
      expect((await t.call('listMessages', {})).total).toBe(0);
      // Accepted and stored as dropped (as Segment answers it): not an error, its reason said.
      const dropped = await callTool(client, 'send_call', { source: 'checkout', call: { type: 'track', userId: 'u_1' } });
      expect(textOf(dropped)).toMatch(/The collector answered 200 .*; stored as call #\d+ \(dropped: .*event/);
      const sent = await structured<{ status: number; call: CallSummary }>(client, 'send_call', { source: 'checkout', call: { type: 'track', event: 'Fine', userId: 'u_1' } });
      expect(sent.status).toBe(200);
      const byName = await structured<Page<CallSummary>>(client, 'list_calls', { source: 'checkout' });
      expect(byName.items.map((c) => c.id)[0]).toBe(sent.call.id);
      expect(byName.total).toBe(2);
      const unknown = await callTool(client, 'list_calls', { source: 'nope' }, { allowError: true });
      expect(textOf(unknown)).toMatch(/no source named "nope" \(sources: checkout\)/);
      // retry_failed too (found by a review: it took no source, and a wrong sourceId answered "0 match").
      const dry = await structured<{ matched: number; dryRun: boolean }>(client, 'retry_failed', { source: 'checkout' });
      expect(dry).toEqual({ matched: 0, retried: 0, dryRun: true });
      const wrongId = await callTool(client, 'retry_failed', { sourceId: 'zzz', dryRun: false }, { allowError: true });
      expect(textOf(wrongId)).toMatch(/^no source has id "zzz": a deleted source's calls are not sent again \(sources: checkout /);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('get_call carries what the lab\'s own receivers found checking each attempt\'s signature; explain_call says why a 401 failed', async () => {
    const t = await lab.start({
      config: {
        mockReceivers: [
          { name: 'right', path: '/right', secret: SHARED },
          { name: 'wrong', path: '/wrong', secret: 'not-the-secret', behavior: { enforceSignature: true } },
        ],
        sources: [{ name: 'checkout', writeKey: 'wk_mcp_checkout', webhooks: { enabled: true, sharedSecret: SHARED, urls: [{ mockReceiver: 'right' }, { mockReceiver: 'wrong' }] } }],
      },
    });
    const server = await lab.controlServer(t, TOKEN);
    const client = await httpMcpClient(server.url, TOKEN);
    try {
      await t.post('/v1/track', { userId: 'u_1', event: 'Checked' }, { writeKey: 'wk_mcp_checkout' });
      const id = (await t.call('listMessages', {})).items[0].id;
      // The first URL delivers the call: the second, refused, is not retried (a 4xx). On a slow machine
      // a round may also time out before it and be retried, each round a 401 of its own; and a receiver
      // notes its verdict as it answers, before the dispatcher stores that attempt. So the wait is for
      // the call delivered with a 401 stored and both receivers' verdicts, and the attempt explain_call
      // names is looked up in a fresh read.
      type GetCall = { call: CallDetail; signatureVerdicts: { receiver: string; signature: string; reason: string | null; status: number }[] };
      const got = await waitFor(async () => {
        const r = await structured<GetCall>(client, 'get_call', { id });
        const d = r.call.deliveries[0];
        const receivers = new Set(r.signatureVerdicts.map((v) => v.receiver));
        return d?.state === 'delivered' && d.attempts.some((a) => a.responseStatus === 401) && receivers.has('right') && receivers.has('wrong') ? r : null;
      }, 'the call delivered, with the 401 attempt and both receivers\' verdicts', 20_000);
      const byReceiver = Object.fromEntries(got.signatureVerdicts.map((v) => [v.receiver, v]));
      expect(byReceiver.right).toMatchObject({ signature: 'valid', status: 200, reason: null });
      expect(byReceiver.wrong).toMatchObject({ signature: 'invalid', status: 401 });
      expect(byReceiver.wrong.reason).toMatch(/^expected HMAC-SHA1 [0-9a-f]{40}, got [0-9a-f]{40}$/);
      const e = await callTool(client, 'explain_call', { id });
      expect(textOf(e)).toMatch(/answered 401/);
      // docs/agents.md's worked example: the advice names the attempt to check, as verify_signature takes it.
      const named = /run verify_signature \{"callId": (\d+), "attemptId": (\d+), "secret": <the receiver's secret>\}/.exec(textOf(e));
      expect(named).not.toBeNull();
      const ref = { callId: Number(named![1]), attemptId: Number(named![2]) };
      expect(ref.callId).toBe(id);
      const attempts = (await structured<GetCall>(client, 'get_call', { id })).call.deliveries.flatMap((d) => d.attempts);
      expect(attempts.find((a) => a.id === ref.attemptId)?.responseStatus, JSON.stringify(attempts.map((a) => [a.id, a.responseStatus, a.errorCode]))).toBe(401);
      const receiverSecret = await structured<VerifySignatureResult>(client, 'verify_signature', { ...ref, secret: 'not-the-secret' });
      expect(receiverSecret.classic).toMatchObject({ state: 'invalid', matched: null });
      const labSecret = await structured<VerifySignatureResult>(client, 'verify_signature', { ...ref, secret: SHARED });
      expect(labSecret.classic).toMatchObject({ state: 'valid', matched: { version: null, given: true } });
    } finally {
      await client.close();
    }
  }, 60_000);

  it('/mcp without the token is 401, with a wrong one 401, from another Origin or Host 403; with both right it initializes', async () => {
    const t = await lab.start();
    const { url } = await lab.controlServer(t, TOKEN);
    const post = (headers: Record<string, string>) => fetch(`${url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, ...headers }, body: initialize });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: 'Bearer wrong-token' })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' })).status).toBe(403);
    // fetch will not send another Host: node:http does (a DNS-rebinding page's request names its own host).
    const port = new URL(url).port;
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { ...mcpHeaders, authorization: `Bearer ${TOKEN}`, host: `evil.example:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.once('error', reject);
      req.end(initialize);
    });
    expect(rebound).toBe(403);
    const get = await fetch(`${url}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(401);
    const ok = await post({ authorization: `Bearer ${TOKEN}`, origin: url });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
    const text = await ok.text();
    expect(text).toContain('"serverInfo":{"name":"webhook-lab"');
    expect(text).not.toContain(TOKEN);
    const unknown = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, authorization: `Bearer ${TOKEN}`, 'mcp-session-id': 'not-a-session' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    expect(unknown.status).toBe(404);
    await unknown.text();
  }, 60_000);
  it('a tool call under way when the lab stops is answered that the lab is stopping, not left with an empty stream', async () => {
    const t = await lab.start();
    const server = await lab.controlServer(t, TOKEN);
    let begun = false;
    const client = await httpMcpClient(server.url, TOKEN, (body) => (begun ||= body.includes('"wait_for_call"')));
    try {
      const waiting = callTool(client, 'wait_for_call', { match: { event: 'Never Sent' }, timeoutMs: 60_000 }, { allowError: true, timeoutMs: 60_000 });
      // The server is answering it (its stream's headers came) before the stop.
      await waitFor(() => begun, 'the server to begin answering wait_for_call', 30_000);
      const closed = server.app.close();
      const r = await waiting;
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/^the lab is stopping: this was not finished/);
      await closed;
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 90_000);

  it('wait_for_call with a match nested 100,000 levels deep: refused naming the depth, not a stack overflow (found by a review)', async () => {
    const t = await lab.start();
    const { url } = await lab.controlServer(t, TOKEN);
    const headers = { ...mcpHeaders, authorization: `Bearer ${TOKEN}` };
    const init = await fetch(`${url}/mcp`, { method: 'POST', headers, body: initialize });
    await init.text();
    const sid = init.headers.get('mcp-session-id')!;
    // Written by hand: JSON.stringify itself overflows at this depth.
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const body = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait_for_call","arguments":{"match":{"properties":${deep}},"timeoutMs":100}}}`;
    const res = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sid }, body });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toMatch(/nested more than \d+ levels deep/);
    expect(text).not.toMatch(/call stack/);
    expect((await t.call('health', {})).storage.ok).toBe(true);
  }, 60_000);

  it('/mcp refuses in JSON-RPC\'s shape: no token 401, a body that is not JSON -32700, another media type 415', async () => {
    const t = await lab.start();
    const { url } = await lab.controlServer(t, TOKEN);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const refusal = async (init: RequestInit) => {
      const res = await fetch(`${url}/mcp`, { method: 'POST', ...init });
      return { status: res.status, body: (await res.json()) as { jsonrpc: string; error: { code: number; message: string }; id: null } };
    };
    const noToken = await refusal({ headers: mcpHeaders, body: initialize });
    expect(noToken).toMatchObject({ status: 401, body: { jsonrpc: '2.0', id: null, error: { code: -32000 } } });
    expect(noToken.body.error.message).toMatch(/Authorization: Bearer/);
    const notJson = await refusal({ headers: { ...mcpHeaders, ...auth }, body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    expect(notJson).toMatchObject({ status: 400, body: { jsonrpc: '2.0', error: { code: -32700 } } });
    expect(notJson.body.error.message).toMatch(/^Parse error/);
    const empty = await refusal({ headers: { ...mcpHeaders, ...auth }, body: '' });
    expect(empty).toMatchObject({ status: 400, body: { error: { code: -32700 } } });
    const put = await refusal({ method: 'PUT', headers: { ...mcpHeaders, ...auth }, body: initialize });
    expect(put).toMatchObject({ status: 405, body: { jsonrpc: '2.0', error: { code: -32000 } } });
    const text = await refusal({ headers: { ...mcpHeaders, ...auth, 'content-type': 'text/plain' }, body: initialize });
    expect(text).toMatchObject({ status: 415, body: { jsonrpc: '2.0', error: { code: -32000 } } });
    // The control API keeps its own shape.
    const api = await fetch(`${url}/api/sources`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{' });
    expect(await api.json()).toMatchObject({ code: 'invalid_input' });
  }, 60_000);

  it('past 32 sessions the one unused longest with no tool call under way is forgotten, a listening stream or not; with 32 tool calls under way a new one is refused with 503', async () => {
    const t = await lab.start();
    const { url } = await lab.controlServer(t, TOKEN);
    const headers = { ...mcpHeaders, authorization: `Bearer ${TOKEN}` };
    const open = async () => {
      const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body: initialize });
      expect(res.status).toBe(200);
      await res.text();
      return res.headers.get('mcp-session-id')!;
    };
    const listTools = async (sid: string) => {
      const res = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sid }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
      await res.text();
      return res.status;
    };
    const held: AbortController[] = [];
    // The answers whose streams are held open are kept referenced: undici cancels the body of a
    // Response it collects, which closed a "busy" stream under load and let its session go.
    const streams: Response[] = [];
    // A tool call under way (a long wait): its answer's stream is open until it is answered.
    const busyWith = async (sid: string) => {
      const ac = new AbortController();
      held.push(ac);
      const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'wait_for_call', arguments: { match: { event: 'Never' }, timeoutMs: 120_000 } } };
      const res = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sid }, body: JSON.stringify(call), signal: ac.signal });
      expect(res.status).toBe(200);
      streams.push(res);
    };
    // A client listening on its session's stream, as the SDK's client does while connected.
    const listen = async (sid: string) => {
      const ac = new AbortController();
      held.push(ac);
      const res = await fetch(`${url}/mcp`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${TOKEN}`, 'mcp-session-id': sid }, signal: ac.signal });
      expect(res.status).toBe(200);
      streams.push(res);
    };
    try {
      const busy = await open();
      await busyWith(busy);
      const listening = await open();
      await listen(listening);
      const idle: string[] = [];
      for (let i = 0; i < 30; i += 1) idle.push(await open());
      // The 33rd: `busy` is oldest but has a tool call under way; `listening` is next and goes.
      const newest = await open();
      expect(await listTools(busy)).toBe(200);
      expect(await listTools(listening)).toBe(404);
      expect(await listTools(newest)).toBe(200);
      // Using a session makes it the newest: idle[0] survives the next one, idle[1] does not.
      expect(await listTools(idle[0])).toBe(200);
      await open();
      expect(await listTools(idle[0])).toBe(200);
      expect(await listTools(idle[1])).toBe(404);
      // Every one of the 32 with a tool call under way: a new session waits for one to be answered.
      const present: string[] = [];
      for (const sid of [busy, newest, ...idle]) if ((await listTools(sid)) === 200) present.push(sid);
      for (const sid of present) if (sid !== busy) await busyWith(sid);
      for (let i = present.length; i < 32; i += 1) await busyWith(await open());
      const refused = await fetch(`${url}/mcp`, { method: 'POST', headers, body: initialize });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/32 MCP sessions have a tool call under way/) } });
      // One client goes away: its session has nothing under way again and makes room.
      held[0].abort();
      await waitFor(async () => {
        const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body: initialize });
        await res.text();
        return res.status === 200;
      }, 'room for a session once a tool call ended', 60_000);
    } finally {
      for (const ac of held) ac.abort();
      // Held to here (see above).
      streams.length = 0;
    }
  }, 120_000);
});
