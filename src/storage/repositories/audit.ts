import type { AuditRepository } from '../../core/contracts/store.js';
import { cleanJson } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { auditLog } from '../schema.js';

export function auditRepository(db: Database): AuditRepository {
  return {
    async record(entry) {
      await db.insert(auditLog).values({ ...cleanJson(entry), durationMs: Math.round(entry.durationMs) });
    },
  };
}
