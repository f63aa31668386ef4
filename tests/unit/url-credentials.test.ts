import { describe, expect, it } from 'vitest';
import { basicAuthOf, hasUrlCredentials, maskUrlPassword, maskUrlPasswordsIn } from '../../src/shared/url-credentials';

describe('maskUrlPassword', () => {
  it.each([
    ['https://bob:s3cret@example.com/hook', 'https://bob:****@example.com/hook'],
    ['http://bob:p%40ss:w@127.0.0.1:9001/h?x=1', 'http://bob:****@127.0.0.1:9001/h?x=1'],
    // The last @ of the authority ends the userinfo, as new URL() reads it.
    ['http://a:b@c@host/x', 'http://a:****@host/x'],
    ['http://:only-password@host/', 'http://:****@host/'],
    ['https://HOST.example/Path', 'https://HOST.example/Path'],
    ['https://bob@host/x', 'https://bob@host/x'],
    ['https://bob:@host/x', 'https://bob:@host/x'],
    ['https://host/x?u=a:b@c', 'https://host/x?u=a:b@c'],
    ['https://host/x#a:b@c', 'https://host/x#a:b@c'],
    ['http:\\\\u:p@host/x', 'http:\\\\u:****@host/x'],
    ['not a url', 'not a url'],
  ])('%s → %s', (url, masked) => {
    expect(maskUrlPassword(url)).toBe(masked);
  });

  it('masks every URL in a message', () => {
    expect(maskUrlPasswordsIn('cannot reach http://u:pw@a/x, then "https://v:pw2@b/y"')).toBe('cannot reach http://u:****@a/x, then "https://v:****@b/y"');
    // A password may hold a ' (found by a review: the match stopped there and the password was shown whole).
    expect(maskUrlPasswordsIn("http://bob:pa'ss-LEAK1@127.0.0.1:3999/ok")).toBe('http://bob:****@127.0.0.1:3999/ok');
    expect(maskUrlPasswordsIn("url 'http://u:p@a/x' and 'http://h/a','http://v:q@b/'")).toBe("url 'http://u:****@a/x' and 'http://h/a','http://v:****@b/'");
  });
});

describe('hasUrlCredentials and basicAuthOf', () => {
  it('reads the user name and password as new URL() does, percent-decoded, UTF-8', () => {
    expect(hasUrlCredentials('http://u:p@h/')).toBe(true);
    expect(hasUrlCredentials('http://u@h/')).toBe(true);
    expect(hasUrlCredentials('http://h/')).toBe(false);
    expect(hasUrlCredentials('nope')).toBe(false);
    expect(basicAuthOf(new URL('http://us%40er:p%3Ass@h/'))).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
    expect(basicAuthOf(new URL('http://%C3%A9mile:pw@h/'))).toBe(`Basic ${Buffer.from('émile:pw').toString('base64')}`);
    expect(basicAuthOf(new URL('http://key@h/'))).toBe(`Basic ${Buffer.from('key:').toString('base64')}`);
    expect(basicAuthOf(new URL('http://h/'))).toBeNull();
  });
});
