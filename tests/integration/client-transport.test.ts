import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createUndiciTransport } from '../../src/main/engine/client/transport';
import { testLab } from '../helpers/test-lab';

// The client's default transport loads undici with its first send (a program that makes a client
// and sends nothing yet pays nothing for it); closing keeps the meaning it had when the Agent was
// made at once: a closed transport refuses, a dispatcher given stays the caller's.
const lab = testLab();
const req = (url: string) => ({ url, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"batch":[]}'), timeoutMs: 5_000 });

describe('createUndiciTransport', () => {
  it('sends on its first use, and refuses once closed, even if it never sent', async () => {
    const r = await lab.receiver();
    const used = createUndiciTransport();
    expect((await used.send(req(`${r.url}/v1/batch`))).status).toBe(200);
    await used.close!();
    await expect(used.send(req(`${r.url}/v1/batch`))).rejects.toMatchObject({ code: 'UND_ERR_CLOSED' });
    const unused = createUndiciTransport();
    await unused.close!();
    await expect(unused.send(req(`${r.url}/v1/batch`))).rejects.toMatchObject({ code: 'UND_ERR_CLOSED' });
    expect(r.requests).toHaveLength(1);
  });

  it('a dispatcher given is used, and left open by close()', async () => {
    const r = await lab.receiver();
    const dispatcher = new Agent();
    const t = createUndiciTransport({ dispatcher });
    expect((await t.send(req(`${r.url}/a`))).status).toBe(200);
    await t.close!();
    expect((await t.send(req(`${r.url}/b`))).status).toBe(200);
    expect(dispatcher.closed).toBe(false);
    await dispatcher.close();
  });

  it('a timeout still ends a send whose receiver never answers', async () => {
    const r = await lab.receiver(() => undefined);
    const t = createUndiciTransport();
    await expect(t.send({ ...req(`${r.url}/hang`), timeoutMs: 200 })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    await t.close!();
  });
});
