import { z } from 'zod';

/** How many server-sent event streams the API keeps open at once, per key and in all (`adapters/api`). */
export interface StreamLimits {
  perKey: number;
  total: number;
  /** A stream with nothing new for this long ends; the client resumes with Last-Event-ID. */
  idleSeconds: number;
}

export const defaultStreamLimits: StreamLimits = { perKey: 20, total: 200, idleSeconds: 60 };

/** `api.streams`: how many server-sent event streams the API keeps open, and how long a quiet one lasts. */
export const apiStreamsSchema = z
  .object({
    /** Open streams per API key; past it, 429. */
    perKey: z.number().int().positive().default(defaultStreamLimits.perKey),
    /** Open streams in all, every key together; past it, 429. */
    total: z.number().int().positive().default(defaultStreamLimits.total),
    /** A stream with nothing new for this long ends; the client resumes with Last-Event-ID. */
    idleSeconds: z.number().positive().max(3600).default(defaultStreamLimits.idleSeconds),
  })
  .strict()
  .default(defaultStreamLimits);
