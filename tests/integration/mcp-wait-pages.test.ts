import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createLabMcpServer } from '../../src/main/mcp/server';
import { inProcessApi, type LabApi } from '../../src/main/testing/transport';
import { testLab } from '../helpers/test-lab';
import { callTool, textOf } from '../helpers/mcp';

// wait_for_call reads in the lab's own process (/mcp, a stdio server's own lab), where one request
// is one uninterrupted stretch of the event loop: 200 calls of 30 KB a page held the lab for half a
// second, four waits for ten (found by a review). It reads 20 at a time (and the handle lets the
// loop serve what waits between pages).

const lab = testLab();

describe('wait_for_call reads the calls in small pages', () => {
  it('at most 20 details a request', async () => {
    const t = await lab.start({ config: { sources: [{ name: 'app', writeKey: 'wk_pages' }] } });
    const batch = Array.from({ length: 90 }, (_, i) => ({ type: 'track', event: `E${i}`, userId: 'u', properties: { pad: 'x'.repeat(2000) } }));
    await t.post('/v1/batch', { batch }, { writeKey: 'wk_pages' });
    const inner = inProcessApi(t.engine.handlers);
    const pages: number[] = [];
    const ops: LabApi = async (name, input) => {
      if (name === 'listMessageDetails') pages.push((input as { limit: number }).limit);
      return inner(name, input);
    };
    const server = createLabMcpServer({ ops, showSecrets: false, uiBase: null });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'pages', version: '1' });
    await client.connect(b);
    try {
      const r = await callTool(client, 'wait_for_call', { match: { event: 'NoSuch' }, timeoutMs: 500 }, { allowError: true });
      expect(textOf(r)).toMatch(/NoSuch/);
      // 90 calls: five pages at least, none over 20.
      expect(pages.length).toBeGreaterThanOrEqual(5);
      expect(Math.max(...pages)).toBe(20);
    } finally {
      await client.close();
      await server.close();
    }
  }, 60_000);
});
