import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { namingPath } from './engine/store/folder-lock';

// The web mode's token, kept in the data folder (owner-only, as everything there) so a tab left open
// reconnects after a restart instead of saying "Not authorized" forever (issue 26). A token given
// with --token or WEBHOOK_LAB_TOKEN is used as given and never written.

export const TOKEN_FILE = 'ui-token';
/** Hex: never starts with '-', so it can be passed back as --token. */
const TOKEN_SHAPE = /^[0-9a-f]{48}$/;

/** The token this data folder keeps, made (0600) at the first start. A file that is not one of ours is replaced. */
export function keptToken(dataDir: string): string {
  const path = join(dataDir, TOKEN_FILE);
  try {
    const kept = readFileSync(path, 'utf8').trim();
    if (TOKEN_SHAPE.test(kept)) return kept;
  } catch {
    // none yet
  }
  const token = randomBytes(24).toString('hex');
  try {
    writeFileSync(path, `${token}\n`, { mode: 0o600 });
  } catch (err) {
    throw namingPath(err, path);
  }
  return token;
}
