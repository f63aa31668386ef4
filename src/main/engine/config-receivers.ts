import type { Config, ConfigWarning, ConfigWebhooks } from '../../shared/config.schema';
import type { MockReceiver } from '../../shared/mock-receiver.schema';
import type { WebhookSettings } from '../../shared/types';
import { maskUrlPassword } from '../../shared/url-credentials';
import type { ConfigProblem } from './simulation/audiences/audience-service';

// A source's receiver URLs in the config file may name one of the lab's own mock receivers
// (`{ "mockReceiver": "flaky" }`, config.schema.ts). Export writes that name for a URL that is one of
// this lab's receivers; import (and a file at start) puts back the URL the receiving lab serves it
// at. A plain URL on this machine at a port the lab does not listen on is applied with a warning:
// it may be another lab's receiver, which the calls would then reach instead of this lab's (issue 26).

/** Where this lab listens, as a config needs it. */
export interface LabAddresses {
  /** `http://127.0.0.1:8789` (or https): the base of the mock receivers' URLs. */
  receiverBase(tls: boolean): string;
}

export interface OwnedPort {
  port: number;
  /** What listens there, for the warning: "collector", "control API", "mock receivers (http)". */
  what: string;
}

type ReceiverDef = Pick<MockReceiver, 'name' | 'path' | 'tls'>;

export interface ResolvedReceivers {
  /** Each source's Webhooks settings with every mockReceiver name replaced by this lab's URL (undefined: not given). */
  webhooks: (WebhookSettings | undefined)[];
  problems: ConfigProblem[];
  /** One per name resolved, so the import says where the calls now go. */
  warnings: ConfigWarning[];
}

/**
 * Resolves every `mockReceiver` of the config's sources against the receivers the file defines
 * (they win: they are written in the same transaction) and the stored ones. An unknown name is a
 * problem naming the field; nothing is applied then.
 */
export function resolveReceiverRefs(config: Config, stored: ReceiverDef[], lab: LabAddresses): ResolvedReceivers {
  const byName = new Map<string, ReceiverDef>();
  for (const r of stored) byName.set(r.name, r);
  for (const r of config.mockReceivers) byName.set(r.name, r);
  const problems: ConfigProblem[] = [];
  const warnings: ConfigWarning[] = [];
  const urlOf = (name: string, path: string): string => {
    const r = byName.get(name);
    if (!r) {
      const known = [...byName.keys()].map((n) => `"${n}"`).join(', ');
      problems.push({ path, message: `no mock receiver named "${name}" in this lab or in the file${known ? ` (there are ${known})` : ''}` });
      return '';
    }
    const url = lab.receiverBase(r.tls ?? false) + r.path;
    warnings.push({ path, code: 'mock_receiver_resolved', message: `mock receiver "${name}" is ${url} in this lab` });
    return url;
  };
  const webhooks = config.sources.map((s, i) => {
    if (!s.webhooks) return undefined;
    const at = `sources[${i}].webhooks`;
    const { urls, mappings, ...rest } = s.webhooks;
    const resolved: WebhookSettings = {
      ...rest,
      urls: urls.map(({ mockReceiver, url, headers }, j) => ({ url: mockReceiver === undefined ? url! : urlOf(mockReceiver, `${at}.urls[${j}].mockReceiver`), headers })),
    };
    if (mappings) {
      resolved.mappings = mappings.map(({ mockReceiver, url, ...m }, j) => ({
        ...m,
        url: mockReceiver === undefined ? url! : urlOf(mockReceiver, `${at}.mappings[${j}].mockReceiver`),
      }));
    }
    return resolved;
  });
  return { webhooks, problems, warnings };
}

/**
 * The export side: a URL that is exactly one of this lab's mock receivers' URLs is written as its
 * name, so another lab importing the file sends to its own receiver of that name. Other URLs (a
 * query string, credentials, `localhost` instead of `127.0.0.1`) stay as they are.
 */
export function referToReceivers(webhooks: WebhookSettings, receivers: { name: string; url: string }[]): ConfigWebhooks {
  const nameOf = (url: string) => receivers.find((r) => r.url === url)?.name;
  const { urls, mappings, ...rest } = webhooks;
  const out: ConfigWebhooks = {
    ...rest,
    urls: urls.map(({ url, headers }) => {
      const name = nameOf(url);
      return name === undefined ? { url, headers } : { mockReceiver: name, headers };
    }),
  };
  if (mappings) {
    out.mappings = mappings.map(({ url, ...m }) => {
      const name = typeof url === 'string' ? nameOf(url) : undefined;
      return name === undefined ? { ...m, url } : { ...m, mockReceiver: name };
    });
  }
  return out;
}

/**
 * The URLs the file gave as URLs (not by name) that point at this machine at a port the lab does not
 * listen on: applied, with a warning. When one of this lab's receivers has that URL's path, the
 * warning names it, since the file most likely came from another lab.
 */
export function loopbackWarnings(config: Config, owned: OwnedPort[], receivers: ReceiverDef[]): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  const ports = [...new Set(owned.map((o) => o.port))];
  const ownList = owned.map((o) => `${o.what} ${o.port}`).join(', ');
  const check = (url: string | undefined, path: string) => {
    if (url === undefined) return;
    const u = new URL(url);
    if (!isLoopbackHost(u.hostname)) return;
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    if (ports.includes(port)) return;
    const same = receivers.find((r) => r.path === u.pathname && (r.tls ?? false) === (u.protocol === 'https:'));
    const hint = same
      ? `if it is another lab's mock receiver, write {"mockReceiver": "${same.name}"} instead of url to send to this lab's receiver of that path`
      : `fine for your own local receiver; if it is another lab's mock receiver, write {"mockReceiver": "<its name here>"} instead of url`;
    warnings.push({
      path,
      code: 'loopback_port_not_owned',
      message: `${maskUrlPassword(url)} is on this machine at port ${port}, which this lab does not listen on (${ownList}): ${hint}`,
    });
  };
  config.sources.forEach((s, i) => {
    s.webhooks?.urls.forEach((e, j) => check(e.url, `sources[${i}].webhooks.urls[${j}].url`));
    s.webhooks?.mappings?.forEach((m, j) => typeof m.url !== 'object' && check(m.url, `sources[${i}].webhooks.mappings[${j}].url`));
  });
  return warnings;
}

/** A host name only this machine answers: localhost, 127.0.0.0/8, ::1, 0.0.0.0 (as WHATWG URL writes them). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/\.$/, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost') || h === '[::1]' || h === '0.0.0.0') return true;
  return /^127\.\d+\.\d+\.\d+$/.test(h);
}
