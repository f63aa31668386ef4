// Loaded with `node --import` before the conformance suite's CLI, on Node 20 only: its bundle imports
// `globSync` from 'fs', which Node has from 22 on, for its `tier-check` command alone (never for
// `conformance server`). The hook hands that one import a copy of 'fs' with a globSync that says so.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
