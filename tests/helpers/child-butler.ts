import { createInterface } from 'node:readline';
import { createButler } from '../../src/app/index.js';
import { loadConfig } from '../../src/config/index.js';
import type { InboundMessage } from '../../src/core/contracts/events.js';
import { createLogger } from '../../src/observability/logger.js';
import { RecordingAdapter } from './recording-adapter.js';

/**
 * Butler in a child process, for tests that kill it. Configured by environment like the service;
 * takes messages to accept as JSON lines on stdin (`stop` stops it gracefully) and prints what its platform is asked to show
 * as JSON lines on stdout (`{"ready":true}` first).
 */
const { config } = loadConfig(process.env);
const adapter = new RecordingAdapter('console', (event) =>
  process.stdout.write(`${JSON.stringify(event)}\n`),
);
const logger = createLogger({
  level: config.logLevel,
  serviceName: 'butler-child',
  destination: process.stderr,
});
const butler = await createButler(config, { logger, adapters: [adapter] });
await butler.start();
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  if (line.trim() === 'stop') {
    await butler.stop(5_000);
    process.stdout.write(`${JSON.stringify({ stopped: true })}\n`);
    process.exit(0);
  }
  const result = await butler.service.accept(JSON.parse(line) as InboundMessage);
  process.stdout.write(`${JSON.stringify({ accepted: result.status })}\n`);
}
