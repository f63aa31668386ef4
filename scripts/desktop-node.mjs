// Electron 45 and its tools (@electron/get, @electron/rebuild, node-abi…) declare Node 22.12+, while
// the engine, web mode and the npm package run on 20.18+ (README, Requirements). `npm start` adds this
// to its reason when the Electron binary could not be fetched on an older Node.

export const DESKTOP_NODE = '22.12.0';

/** '' on Node 22.12 or newer; else a clause naming the version the desktop window needs. */
export function desktopNodeHint(version) {
  const [major, minor] = version.split('.').map(Number);
  const [needMajor, needMinor] = DESKTOP_NODE.split('.').map(Number);
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return '';
  return `; the desktop window needs Node.js ${needMajor}.${needMinor} or newer (Electron 45's tools declare it), this is ${version}`;
}
