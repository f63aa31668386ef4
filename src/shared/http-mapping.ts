import type { OpDef } from './api.contract';

// How an operation of the contract maps onto HTTP, used by the server to route and by the
// renderer's HTTP transport to call: `/api` + path, `:name` filled from the input, GET/DELETE
// input as the query string, other methods' input as a JSON body.

export const API_PREFIX = '/api';

/**
 * HTTP only: exportDeliveries's file itself, streamed (GET /api/export/file, same query), for
 * exports too large to hold as one JSON string. IPC has the operation alone.
 */
export const EXPORT_FILE_PATH = '/export/file';

export interface HttpRequestShape {
  method: string;
  url: string;
  body?: string;
}

export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
}

export function toHttpRequest(def: Pick<OpDef, 'method' | 'path'>, input: Record<string, unknown> = {}): HttpRequestShape {
  const rest: Record<string, unknown> = { ...input };
  const path = def.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    return encodeURIComponent(String(value));
  });
  let url = API_PREFIX + path;
  if (def.method === 'GET' || def.method === 'DELETE') {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(rest)) if (v !== undefined && v !== null) qs.set(k, String(v));
    const s = qs.toString();
    if (s) url += `?${s}`;
    return { method: def.method, url };
  }
  return { method: def.method, url, body: JSON.stringify(rest) };
}
