import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

// An MCP client as an agent's is: the SDK's own Client, over Streamable HTTP at a lab's /mcp (the
// stdio tests give it a StdioClientTransport instead).

/** `onAnswerBegun`: told when the server began answering a request (its response headers arrived). */
export async function httpMcpClient(base: string, token: string, onAnswerBegun?: (body: string) => void): Promise<Client> {
  const client = new Client({ name: 'webhook-lab-tests', version: '1.0.0' });
  const observed: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (typeof init?.body === 'string') onAnswerBegun?.(init.body);
    return res;
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } }, fetch: observed }));
  return client;
}

/** Calls a tool; fails the test with its text when it answered isError (unless `allowError`). */
export async function callTool(client: Client, name: string, args: Record<string, unknown>, opts: { allowError?: boolean; timeoutMs?: number } = {}): Promise<CallToolResult> {
  const r = (await client.callTool({ name, arguments: args }, undefined, { timeout: opts.timeoutMs ?? 60_000 })) as CallToolResult;
  if (r.isError && !opts.allowError) throw new Error(`${name} answered isError: ${JSON.stringify(r.content)}`);
  return r;
}

/** A tool's structured content, typed as the test expects it. */
export async function structured<T>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  return (await callTool(client, name, args)).structuredContent as T;
}

export function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

export const TOOL_NAMES = [
  'get_lab', 'list_sources', 'list_calls', 'get_call', 'wait_for_call', 'send_call',
  'replay_call', 'retry_failed', 'check_receiver', 'verify_signature', 'list_violations', 'explain_call',
];
