import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { VERSION } from '../engine/version';
import type { LabApi } from '../testing/transport';
import type { ToolContext } from './tool-kit';
import { registerReadTools } from './tools-read';
import { registerActTools } from './tools-act';

// `webhook-lab mcp` (issue 39): a Model Context Protocol server over what the lab knows, independent
// of its transport (stdio in cli-mcp.ts, Streamable HTTP at /mcp in server/mcp-route.ts) and of where
// the lab runs: `ops` calls the API contract's operations, on an engine in this process
// (testing/transport.ts inProcessApi) or a running lab's control API (httpApi).

export interface LabMcpOptions {
  ops: LabApi;
  /** Show shared secrets, Standard Webhooks secrets and URL passwords (stdio with --show-secrets only). */
  showSecrets: boolean;
  /** The control API token: never in an answer. */
  token?: string;
  /** The web UI's root, for calls' permalinks; null when the lab has none. */
  uiBase: string | null;
  /** How often waits look again (default 50 ms). */
  pollMs?: number;
  /** Aborted when the lab stops: a tool call still under way answers at once that it is stopping. */
  stopping?: AbortSignal;
}

export const TOOL_NAMES = [
  'get_lab',
  'list_sources',
  'list_calls',
  'get_call',
  'wait_for_call',
  'send_call',
  'replay_call',
  'retry_failed',
  'check_receiver',
  'verify_signature',
  'list_violations',
  'explain_call',
] as const;

/** A new server (one per stdio process, one per HTTP session): connect it to a transport. */
export function createLabMcpServer(o: LabMcpOptions): McpServer {
  const server = new McpServer(
    { name: 'webhook-lab', title: 'Webhook Lab', version: VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'Webhook Lab: a local Segment-style collector and Webhooks destination. get_lab gives the collector URL and write keys; list_calls/get_call read what arrived; wait_for_call waits for a call matching a partial object; explain_call says why a call failed or was not forwarded; check_receiver checks a webhook receiver; verify_signature checks a signature.',
    },
  );
  const ctx: ToolContext = { ops: o.ops, redaction: { showSecrets: o.showSecrets, token: o.token }, uiBase: o.uiBase, pollMs: o.pollMs ?? 50, stopping: o.stopping };
  registerReadTools(server, ctx);
  registerActTools(server, ctx);
  return server;
}
