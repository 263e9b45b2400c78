import type { Store } from '../core/contracts/store.js';
import type { Database } from './database.js';
import { agentRunRepository, routingRepository } from './repositories/agent-runs.js';
import { approvalRepository } from './repositories/approvals.js';
import { auditRepository } from './repositories/audit.js';
import { budgetRepository } from './repositories/budgets.js';
import { connectionRepository } from './repositories/connections.js';
import { conversationEventRepository } from './repositories/conversation-events.js';
import { conversationRepository } from './repositories/conversations.js';
import { feedbackRepository } from './repositories/feedback.js';
import { feishuSecretRepository, feishuTenantRepository } from './repositories/feishu-tenants.js';
import { fileRepository } from './repositories/files.js';
import { grantRepository } from './repositories/grants.js';
import { inboxRepository } from './repositories/inbox.js';
import { inputWaitRepository } from './repositories/input-waits.js';
import { installationRepository } from './repositories/installations.js';
import { memoryRepository } from './repositories/memories.js';
import { modelSlotRepository } from './repositories/model-slots.js';
import { readRepository } from './repositories/reads.js';
import { scheduleRepository } from './repositories/schedules.js';
import { stopRepository } from './repositories/stops.js';
import { turnRepository } from './repositories/turns.js';
import { usageRepository } from './repositories/usage.js';
import { guardRepository, toStorageError } from './storage-errors.js';

/**
 * The core's Store over a drizzle database (or transaction: repositories take either). Database errors
 * leave it as StorageErrors that name the operation, never the statement's parameters.
 */
export function createStore(db: Database, options: { inTransaction?: boolean } = {}): Store {
  return {
    // Group commit only outside transactions: inside one, an insert must run on the transaction.
    inbox: guardRepository('inbox', inboxRepository(db, { groupCommit: !options.inTransaction })),
    conversations: guardRepository('conversations', conversationRepository(db)),
    turns: guardRepository('turns', turnRepository(db)),
    approvals: guardRepository('approvals', approvalRepository(db)),
    grants: guardRepository('grants', grantRepository(db)),
    audit: guardRepository('audit', auditRepository(db)),
    memories: guardRepository('memories', memoryRepository(db)),
    agentRuns: guardRepository('agentRuns', agentRunRepository(db)),
    routing: guardRepository('routing', routingRepository(db)),
    usage: guardRepository('usage', usageRepository(db)),
    conversationEvents: guardRepository('conversationEvents', conversationEventRepository(db)),
    files: guardRepository('files', fileRepository(db)),
    stops: guardRepository('stops', stopRepository(db)),
    feedback: guardRepository('feedback', feedbackRepository(db)),
    schedules: guardRepository('schedules', scheduleRepository(db)),
    budgets: guardRepository('budgets', budgetRepository(db)),
    reads: guardRepository('reads', readRepository(db)),
    connections: guardRepository('connections', connectionRepository(db)),
    inputWaits: guardRepository('inputWaits', inputWaitRepository(db)),
    modelSlots: guardRepository('modelSlots', modelSlotRepository(db)),
    installations: guardRepository('installations', installationRepository(db)),
    feishuTenants: guardRepository('feishuTenants', feishuTenantRepository(db)),
    feishuSecrets: guardRepository('feishuSecrets', feishuSecretRepository(db)),
    async transaction(work) {
      try {
        return await db.transaction((tx) =>
          work(createStore(tx as unknown as Database, { inTransaction: true })),
        );
      } catch (error) {
        throw toStorageError('transaction', error);
      }
    },
  };
}
