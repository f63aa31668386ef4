import { defaultDataDir } from './data-dir';
import { VERSION } from './engine/version';
import { printableText } from './printable';
import { DEFAULT_COLLECTOR_PORT, DEFAULT_UI_PORT } from '../shared/ports';

// What every command of the CLI shares, kept apart from the commands so that a command loads only
// its own modules (cli.ts imports each command when it runs: `--help` or `probe` need no engine).

export const USAGE = `Webhook Lab ${VERSION} — headless mode

Usage:
  webhook-lab serve [options]
  webhook-lab load --rate N (--duration S | --total N) [options]   (see webhook-lab load --help)
  webhook-lab check --api URL --token T [options]   wait for deliveries, fail if any failed (see webhook-lab check --help)
  webhook-lab probe --url URL --secret S [options]  check a webhook receiver (see webhook-lab probe --help)
  webhook-lab mcp [--api URL --token T | --data-dir DIR]  MCP server over stdio for coding agents (see webhook-lab mcp --help)

Options:
  --config FILE          JSON config: sources, webhook settings, settings (applied idempotently)
  --data-dir DIR         where the SQLite database lives (default: WEBHOOK_LAB_DATA_DIR, else ${defaultDataDir()})
  --collector-port N     collector port (default ${DEFAULT_COLLECTOR_PORT}; 0 = any free port)
  --ui-port N            control API and web UI port (default ${DEFAULT_UI_PORT}; 0 = any free port)
  --host ADDR            bind address for both servers (default 127.0.0.1)
  --token T              control API token (default: WEBHOOK_LAB_TOKEN or a random one)
  --time-scale N         retry time-warp factor (1 = real time)
  --strict               strict collector: unknown write key → 401, invalid call → 400
  -h, --help             this help
`;

export function fail(message: string, code = 2): never {
  process.stderr.write(`webhook-lab: ${printableText(message)}\n`);
  process.exit(code);
}
