// Could Segment deliver to this URL? Segment sends Webhooks (Actions) requests from its own cloud,
// so a loopback, private or link-local address (a receiver on your machine or your network) is out
// of its reach, and Segment's infrastructure may refuse such addresses outright. This is the lab's own
// caution, not a rule in Segment's code: the webhook destination on action-destinations' main branch
// (packages/destination-actions/src/destinations/webhook/, release 7451efe) sends to any URL it is
// given, 127.0.0.1 included. The lab delivers there too; the note says why it would not work for real.
//
// The ranges are the usual special-use blocks (RFC 6890). The parser is WHATWG URL, which already
// turns integer, hex and octal hosts (2130706433, 0x7f.1) into dotted IPv4, so those are caught as
// the address they mean; hostnames that can only resolve to this machine or the local network are
// named too.

export const ACTIONS_REFUSES_URL = 'Segment could not reach this URL from its cloud';

const V4_BLOCKED: Array<[cidr: string, why: string]> = [
  ['0.0.0.0/8', '"this network" (0.0.0.0 means any local address)'],
  ['10.0.0.0/8', 'a private network address'],
  ['100.64.0.0/10', 'a carrier-grade NAT (shared) address'],
  ['127.0.0.0/8', 'a loopback address (this machine)'],
  ['169.254.0.0/16', 'a link-local address (this includes cloud metadata endpoints)'],
  ['172.16.0.0/12', 'a private network address'],
  ['192.0.0.0/24', 'reserved for IETF protocol assignments'],
  ['192.0.2.0/24', 'a documentation address (TEST-NET-1)'],
  ['192.168.0.0/16', 'a private network address'],
  ['198.51.100.0/24', 'a documentation address (TEST-NET-2)'],
  ['203.0.113.0/24', 'a documentation address (TEST-NET-3)'],
  ['224.0.0.0/4', 'a multicast address'],
  ['240.0.0.0/4', 'a reserved address'],
];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, o) => ((acc << 8) | Number(o)) >>> 0, 0);
}

const V4_RANGES = V4_BLOCKED.map(([cidr, why]) => {
  const [net, bits] = cidr.split('/');
  const mask = Number(bits) === 0 ? 0 : (0xffffffff << (32 - Number(bits))) >>> 0;
  return { cidr, why, net: v4ToInt(net), mask };
});

function ipv4Reason(ip: string): string | null {
  const n = v4ToInt(ip);
  const r = V4_RANGES.find((x) => ((n & x.mask) >>> 0) === x.net);
  return r ? `${ip} is ${r.why}, in ${r.cidr}` : null;
}

/** `ip` as WHATWG URL writes it (lowercase, compressed, no brackets). */
function ipv6Reason(ip: string): string | null {
  if (ip === '::1') return '::1 is the IPv6 loopback address (this machine)';
  if (ip === '::') return ':: is the unspecified IPv6 address';
  const first = ip.startsWith(':') ? 0 : parseInt(ip.split(':')[0], 16);
  if ((first & 0xffc0) === 0xfe80) return `${ip} is an IPv6 link-local address, in fe80::/10`;
  if ((first & 0xfe00) === 0xfc00) return `${ip} is an IPv6 unique local (private) address, in fc00::/7`;
  // IPv4-mapped forms (::ffff:7f00:1) are not named.
  return null;
}

function hostnameReason(host: string): string | null {
  const h = host.replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return `${host} always resolves to a loopback address (this machine)`;
  if (h.endsWith('.local')) return `${host} is a multicast DNS name, which resolves only on your local network`;
  if (h.endsWith('.internal')) return `${host} is under .internal, a top-level domain reserved for private networks`;
  return null;
}

/** Why Segment could not deliver to `url` from its cloud, or null when nothing says so. */
export function privateUrlReason(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'it is not a valid URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `only http and https are allowed, not ${u.protocol}`;
  const host = u.hostname.toLowerCase();
  if (host.startsWith('[')) return ipv6Reason(host.slice(1, -1));
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return ipv4Reason(host);
  return hostnameReason(host);
}

/** The note the lab shows for a mapping's URL: "Segment could not reach this URL from its cloud: why". */
export function actionsUrlWarning(url: string): string | null {
  const why = privateUrlReason(url);
  return why === null ? null : `${ACTIONS_REFUSES_URL}: ${why}`;
}
