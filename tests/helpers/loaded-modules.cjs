// Preloaded (node --require) into a process under test: at its exit, writes the files it loaded
// through require to LOADED_MODULES_FILE, one per line (tests/integration/start-modules.test.ts).
const { writeFileSync } = require('node:fs');
process.on('exit', () => writeFileSync(process.env.LOADED_MODULES_FILE, Object.keys(require.cache).join('\n')));
