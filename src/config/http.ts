import { z } from 'zod';
import { defaultHttpLimits } from '../http/server.js';

/**
 * `http:` in the config file: how long a client may take to send a request, and how many connections
 * it may hold, so slow or idle clients cannot hold the server (docs/operating.md, "HTTP limits").
 */

const milliseconds = z.number().int().positive().max(600_000);
const count = z.number().int().positive().max(1_000_000);

export const httpSchema = z
  .object({
    /** The request line and headers must arrive within this (a silent socket is closed then too). */
    headersTimeoutMs: milliseconds.default(defaultHttpLimits.headersTimeoutMs),
    /** The whole request, body included; a response that streams (SSE) is not limited by it. */
    requestTimeoutMs: milliseconds.default(defaultHttpLimits.requestTimeoutMs),
    keepAliveTimeoutMs: milliseconds.default(defaultHttpLimits.keepAliveTimeoutMs),
    /** Keep it below the process's file limit (`ulimit -n`), with room for the database and files. */
    maxConnections: count.default(defaultHttpLimits.maxConnections),
    maxConnectionsPerAddress: count.default(defaultHttpLimits.maxConnectionsPerAddress),
    /** Of `maxConnections`, kept for webhooks and health checks: API and console requests never use them. */
    reservedConnections: z.number().int().min(0).default(defaultHttpLimits.reservedConnections),
  })
  .strict()
  .superRefine((http, context) => {
    if (http.headersTimeoutMs > http.requestTimeoutMs)
      context.addIssue({
        code: 'custom',
        path: ['headersTimeoutMs'],
        message: `must not exceed requestTimeoutMs (${http.requestTimeoutMs})`,
      });
    if (http.maxConnectionsPerAddress > http.maxConnections)
      context.addIssue({
        code: 'custom',
        path: ['maxConnectionsPerAddress'],
        message: `must not exceed maxConnections (${http.maxConnections})`,
      });
    if (http.reservedConnections >= http.maxConnections)
      context.addIssue({
        code: 'custom',
        path: ['reservedConnections'],
        message: `must be less than maxConnections (${http.maxConnections})`,
      });
  })
  .default(defaultHttpLimits);
