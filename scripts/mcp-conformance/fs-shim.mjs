// node:fs with globSync (Node 22+), or one that says why it is missing: only `conformance tier-check` calls it.
import fs from 'node:fs';

export * from 'node:fs';
export default fs;
export const globSync =
  fs.globSync ??
  (() => {
    throw new Error('globSync needs Node.js 22 (the conformance suite uses it for tier-check only)');
  });
