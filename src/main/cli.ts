import { join } from 'node:path';
import { keepRunningOnUnhandledRejection } from './process-guard';
import { VERSION } from './engine/version';
import { printableLog } from './printable';

// The `webhook-lab` command line. Each command's module is imported when that command runs, so a
// command loads only what it needs: `--help`, `check` and `probe` load no engine, no server and no
// database driver (they took ~0.7 s of CPU to start when they did), `serve` no MCP SDK. The usage too
// is imported where needed: imported here statically, the bundler would put it in this file and the
// serve chunk would require this file back.

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (!command || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write((await import('./cli-usage')).USAGE);
    return;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  if (command === 'serve') {
    keepRunningOnUnhandledRejection((line) => process.stderr.write(`${printableLog(line)}\n`));
    return (await import('./cli-serve')).runServeCommand(rest, join(__dirname, '../renderer'));
  }
  if (command === 'load') return (await import('./cli-load')).runLoadCommand(rest);
  if (command === 'check') return (await import('./cli-check')).runCheckCommand(rest);
  if (command === 'probe') return (await import('./cli-probe')).runProbeCommand(rest);
  if (command === 'mcp') {
    keepRunningOnUnhandledRejection((line) => process.stderr.write(`${printableLog(line)}\n`));
    return (await import('./cli-mcp')).runMcpCommand(rest);
  }
  const { fail, USAGE } = await import('./cli-usage');
  fail(`unknown command "${command}"\n\n${USAGE}`);
}

main().catch(async (err: NodeJS.ErrnoException) => {
  const { fail, USAGE } = await import('./cli-usage');
  if (err.code === 'EADDRINUSE') fail(`${err.message}: another program (or another Webhook Lab) uses that port; pick another with --collector-port/--ui-port, or 0 for any free port`);
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') fail(`${err.message}\n\n${USAGE}`);
  fail(err.stack ?? String(err), 1);
});
