#!/usr/bin/env node
// The desktop app's icon set, rendered from the one drawing of it, src/renderer/public/icon.svg (also
// the web UI's favicon). Run after changing the SVG and commit the results:
//   node scripts/icons.mjs
// Needs rsvg-convert (Debian/Ubuntu: apt-get install librsvg2-bin; macOS: brew install librsvg).
// The ICO and ICNS containers are written here, from the PNGs, with no other tool.
//
// Writes (electron-builder.yml names them):
//   build/icons/NxN.png   Linux (AppImage, deb), 16 … 1024
//   build/icon.png        1024×1024, electron-builder's fallback for every platform
//   build/icon.icns       macOS (dmg): PNG entries 16 … 1024
//   build/icon.ico        Windows (nsis): PNG entries 16 … 256
//   src/renderer/public/icon.png   512×512, the window icon (Linux, Windows) in out/renderer/

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SVG = join(ROOT, 'src/renderer/public/icon.svg');
const BUILD = join(ROOT, 'build');
export const SIZES = [16, 24, 32, 48, 64, 128, 256, 512, 1024];
/** ICNS entry types holding PNG data, by pixel size (Apple's icns format; @2x types reuse a size). */
export const ICNS_TYPES = [
  ['icp4', 16], ['icp5', 32], ['icp6', 64], ['ic07', 128], ['ic08', 256], ['ic09', 512], ['ic10', 1024],
  ['ic11', 32], ['ic12', 64], ['ic13', 256], ['ic14', 512],
];
export const ICO_SIZES = [16, 24, 32, 48, 64, 128, 256];

function render(size) {
  return execFileSync('rsvg-convert', ['--width', String(size), '--height', String(size), '--format', 'png', SVG], { maxBuffer: 64 * 1024 * 1024 });
}

export function icns(pngs) {
  const entries = ICNS_TYPES.map(([type, size]) => {
    const head = Buffer.alloc(8);
    head.write(type, 0, 'latin1');
    head.writeUInt32BE(8 + pngs.get(size).length, 4);
    return Buffer.concat([head, pngs.get(size)]);
  });
  const head = Buffer.alloc(8);
  head.write('icns', 0, 'latin1');
  head.writeUInt32BE(8 + entries.reduce((n, e) => n + e.length, 0), 4);
  return Buffer.concat([head, ...entries]);
}

export function ico(pngs) {
  const head = Buffer.alloc(6);
  head.writeUInt16LE(0, 0);
  head.writeUInt16LE(1, 2); // 1 = icon
  head.writeUInt16LE(ICO_SIZES.length, 4);
  let offset = 6 + 16 * ICO_SIZES.length;
  const dir = ICO_SIZES.map((size) => {
    const e = Buffer.alloc(16);
    e.writeUInt8(size >= 256 ? 0 : size, 0); // 0 means 256
    e.writeUInt8(size >= 256 ? 0 : size, 1);
    e.writeUInt16LE(1, 4); // colour planes
    e.writeUInt16LE(32, 6); // bits per pixel
    e.writeUInt32LE(pngs.get(size).length, 8);
    e.writeUInt32LE(offset, 12);
    offset += pngs.get(size).length;
    return e;
  });
  return Buffer.concat([head, ...dir, ...ICO_SIZES.map((s) => pngs.get(s))]);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const pngs = new Map(SIZES.map((s) => [s, render(s)]));
  mkdirSync(join(BUILD, 'icons'), { recursive: true });
  for (const [size, png] of pngs) writeFileSync(join(BUILD, 'icons', `${size}x${size}.png`), png);
  writeFileSync(join(BUILD, 'icon.png'), pngs.get(1024));
  writeFileSync(join(BUILD, 'icon.icns'), icns(pngs));
  writeFileSync(join(BUILD, 'icon.ico'), ico(pngs));
  writeFileSync(join(ROOT, 'src/renderer/public/icon.png'), pngs.get(512));
  const total = [...pngs.values()].reduce((n, p) => n + p.length, 0);
  process.stdout.write(`icons: ${SIZES.join(', ')} px from ${SVG.slice(ROOT.length + 1)} (${(total / 1024).toFixed(0)} KB of PNG)\n`);
}
