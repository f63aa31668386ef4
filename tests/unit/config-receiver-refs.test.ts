import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/shared/config.schema';
import { isLoopbackHost, referToReceivers } from '../../src/main/engine/config-receivers';
import '../../src/main/engine/actions/rules';

// Issue 26: a config names the lab's mock receivers ({"mockReceiver": "flaky"}) where a URL goes.

describe('mock receivers by name in a config', () => {
  it('the example in docs/mock-receivers.md is a valid config', () => {
    const md = readFileSync(new URL('../../docs/mock-receivers.md', import.meta.url), 'utf8');
    const block = [...md.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes('"mockReceiver"'));
    const parsed = configSchema.safeParse(JSON.parse(block!));
    expect(parsed.error?.issues ?? []).toEqual([]);
  });

  it('export writes a name only for a URL that is exactly a receiver\'s', () => {
    const receivers = [{ name: 'hook', url: 'http://127.0.0.1:8789/hook' }];
    const out = referToReceivers(
      {
        enabled: true,
        urls: [
          { url: 'http://127.0.0.1:8789/hook', headers: { 'X-A': '1' } },
          { url: 'http://localhost:8789/hook', headers: {} },
          { url: 'http://127.0.0.1:8789/hook?x=1', headers: {} },
        ],
        mode: 'both',
        mappings: [{ name: 'm', trigger: {}, url: 'http://127.0.0.1:8789/hook', method: 'POST', headers: {} }],
      },
      receivers,
    );
    expect(out.urls).toEqual([
      { mockReceiver: 'hook', headers: { 'X-A': '1' } },
      { url: 'http://localhost:8789/hook', headers: {} },
      { url: 'http://127.0.0.1:8789/hook?x=1', headers: {} },
    ]);
    expect(out.mappings).toEqual([{ name: 'm', trigger: {}, mockReceiver: 'hook', method: 'POST', headers: {} }]);
  });

  it('loopback hosts as WHATWG URL writes them', () => {
    for (const url of ['http://localhost:1/', 'http://app.localhost:1/', 'http://127.0.0.1:1/', 'http://127.9.8.7:1/', 'http://[::1]:1/', 'http://0.0.0.0:1/', 'http://2130706433:1/']) {
      expect(isLoopbackHost(new URL(url).hostname), url).toBe(true);
    }
    for (const url of ['http://example.com/', 'http://10.0.0.1/', 'http://128.0.0.1/', 'http://[::2]/']) expect(isLoopbackHost(new URL(url).hostname), url).toBe(false);
  });
});
