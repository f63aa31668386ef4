import { describe, expect, it } from 'vitest';
import { ACTIONS_REFUSES_URL, actionsUrlWarning, privateUrlReason } from '../../src/shared/actions/private-url';

describe('URLs Segment could not reach from its cloud (the lab\'s caution, not a check in Segment\'s code)', () => {
  it.each([
    ['http://127.0.0.1:9001/hook', 'loopback'],
    ['http://127.8.9.10/', 'loopback'],
    ['http://10.1.2.3/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.255/', 'private'],
    ['http://192.168.1.20/', 'private'],
    ['http://169.254.169.254/latest/meta-data', 'link-local'],
    ['http://0.0.0.0:8080/', '0.0.0.0 means'],
    ['http://100.64.0.1/', 'carrier-grade'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://2130706433/', 'loopback'], // integer form: the URL parser reads it as 127.0.0.1
    ['http://0x7f.1/', 'loopback'],
    ['http://[::1]:3000/', 'loopback'],
    ['http://[::]/', 'unspecified'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[febf::1]/', 'link-local'],
    ['http://[fc00::1]/', 'unique local'],
    ['http://[fd12:3456::1]/', 'unique local'],
    ['http://localhost:9001/', 'loopback'],
    ['http://LOCALHOST/', 'loopback'],
    ['http://api.localhost/', 'loopback'],
    ['http://printer.local/', 'multicast DNS'],
    ['http://svc.corp.internal/', '.internal'],
    ['ftp://example.com/', 'only http and https'],
    ['not a url', 'not a valid URL'],
  ])('%s', (url, why) => {
    expect(privateUrlReason(url)).toContain(why);
    expect(actionsUrlWarning(url)).toMatch(new RegExp(`^${ACTIONS_REFUSES_URL}: `));
  });

  it.each([
    'https://example.com/hook',
    'http://8.8.8.8/',
    'http://172.32.0.1/', // just past 172.16.0.0/12
    'http://192.169.0.1/',
    'http://169.255.0.1/',
    'http://[2001:db8::1]/',
    'http://[fec0::1]/', // past fe80::/10
    'http://[fe00::1]/',
    'https://localhost.example.com/',
    'https://internal.example.com/',
  ])('%s is allowed', (url) => {
    expect(privateUrlReason(url)).toBeNull();
    expect(actionsUrlWarning(url)).toBeNull();
  });

  it('the message says why', () => {
    expect(actionsUrlWarning('http://127.0.0.1:9001/hook')).toBe(
      "Segment could not reach this URL from its cloud: 127.0.0.1 is a loopback address (this machine), in 127.0.0.0/8",
    );
  });
});
