// HTTP header names are case-insensitive: a header map as stored or received (an attempt's request,
// a receiver's record) is read by name here. Browser-safe.

/** The value of header `name` (given lowercase) in `headers`, whatever case its key has. */
export function headerValue(headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  // Node's and undici's maps already hold names lowercase.
  if (Object.hasOwn(headers, name)) return headers[name];
  for (const k of Object.keys(headers)) if (k.toLowerCase() === name) return headers[k];
  return undefined;
}
