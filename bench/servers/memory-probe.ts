/**
 * Preloaded into a Butler process (`--import`) by the memory benchmark: answers `{ type: 'memory' }`
 * over IPC with process.memoryUsage(), after a full garbage collection when asked and available
 * (`--expose-gc`). Butler's own code is unchanged.
 */

interface MemoryRequest {
  type?: unknown;
  collect?: unknown;
}

process.on('message', (message: MemoryRequest) => {
  if (message?.type !== 'memory') return;
  const gc = (globalThis as { gc?: () => void }).gc;
  if (message.collect === true && gc) gc();
  process.send?.({ type: 'memory', usage: process.memoryUsage() });
});
process.channel?.unref();
