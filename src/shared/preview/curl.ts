// "Copy as cURL" for an attempt: the same method, URL, headers and exact body bytes, so a developer
// can replay it against their receiver from a shell. POSIX single-quoting throughout.

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

// curl computes these itself; sending the recorded ones could contradict what it actually sends.
const SKIP = new Set(['content-length', 'host', 'connection', 'transfer-encoding']);

export function curlCommand(req: { method?: string; url: string; headers: Record<string, string>; body?: string | null }): string {
  const parts = [`curl -X ${req.method ?? 'POST'} ${shellQuote(req.url)}`];
  for (const [k, v] of Object.entries(req.headers)) {
    if (!SKIP.has(k.toLowerCase())) parts.push(`-H ${shellQuote(`${k}: ${v}`)}`);
  }
  if (req.body != null) parts.push(`--data-binary ${shellQuote(req.body)}`);
  return parts.join(' \\\n  ');
}
