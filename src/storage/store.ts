import type { Store } from '../core/store.js';
import type { Database } from './database.js';
import { approvalRepository } from './repositories/approvals.js';
import { auditRepository } from './repositories/audit.js';
import { conversationRepository } from './repositories/conversations.js';
import { inboxRepository } from './repositories/inbox.js';
import { memoryRepository } from './repositories/memories.js';

/** The core's Store over a drizzle database (or transaction: repositories take either). */
export function createStore(db: Database): Store {
  return {
    inbox: inboxRepository(db),
    conversations: conversationRepository(db),
    approvals: approvalRepository(db),
    audit: auditRepository(db),
    memories: memoryRepository(db),
    transaction: (work) => db.transaction((tx) => work(createStore(tx as unknown as Database))),
  };
}
