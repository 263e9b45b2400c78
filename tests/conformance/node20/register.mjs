// Node 20 has no fs.globSync, which the MCP conformance suite (0.1.16) imports from `fs` for one summary step
// (tier-check's `**/checks.json`); the client scenarios never call it. On Node 20 this loader hands the suite a
// small globSync of its own; on Node 22 and later it does nothing. Use: node --import ./register.mjs <suite>.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') register('./glob-loader.mjs', import.meta.url);
