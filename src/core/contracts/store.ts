import type { BudgetRepository } from './budget-records.js';
import type { ConnectionRepository } from './connection-records.js';
import type { ConversationEventRepository } from './conversation-events.js';
import type { FeedbackRepository } from './feedback-records.js';
import type { FeishuSecretRepository, FeishuTenantRepository } from './feishu-tenants.js';
import type { FileRepository } from './file-records.js';
import type { InputWaitRepository } from './input-waits.js';
import type { InstallationRepository } from './installation-records.js';
import type { ReadRepository } from './read-models.js';
import type {
  ApprovalRepository,
  AuditRepository,
  ConversationRepository,
  GrantRepository,
  InboxRepository,
  MemoryRepository,
  ModelSlotRepository,
} from './repositories.js';
import type { ScheduleRepository } from './schedule-records.js';
import type { StopRepository } from './stop-records.js';
import type {
  AgentRunRepository,
  RoutingRepository,
  TurnRepository,
  UsageRepository,
} from './store-records.js';

/**
 * Storage contracts of the core. `src/storage` implements them with drizzle on Postgres or PGlite;
 * the core never sees SQL. `Store.transaction` gives the same repositories bound to one transaction.
 */

export type { BudgetNotice, BudgetRepository } from './budget-records.js';
export type {
  FeedbackInput,
  FeedbackRating,
  FeedbackRecord,
  FeedbackRepository,
  FeedbackResult,
  NewFeedback,
  RatedReply,
} from './feedback-records.js';
export type { FileOrigin, FileRepository, NewStoredFile, StoredFile } from './file-records.js';
export type {
  AgentFrame,
  ApprovalGrant,
  ApprovalNoticeCard,
  ApprovalRecord,
  ApprovalRepository,
  ApprovalVote,
  ApprovedWait,
  AuditEntry,
  AuditRepository,
  ClaimedBatch,
  CompactionResult,
  ConversationRecord,
  ConversationRepository,
  ExecutionState,
  GrantRepository,
  InboxEvent,
  InboxOutcome,
  InboxPayload,
  InboxRepository,
  InflightTurn,
  Memory,
  MemoryOwner,
  MemoryRepository,
  ModelSlotRepository,
  NewApproval,
  NewInboxEvent,
  ResumeState,
} from './repositories.js';
export type {
  DueDecision,
  NewSchedule,
  ScheduleFilter,
  ScheduleRecord,
  ScheduleRepository,
  ScheduleRun,
  ScheduleRunOutcome,
  ScheduleSource,
  ScheduleStatus,
} from './schedule-records.js';
export type { StopRepository, StopRequest } from './stop-records.js';
export type {
  AgentRun,
  AgentRunRepository,
  AgentUsage,
  RoutingIntent,
  RoutingRecord,
  RoutingRepository,
  TurnCommit,
  TurnOpening,
  TurnRepository,
  TurnUsageRecord,
  UsageGroup,
  UsageRepository,
  UsageRollup,
  UsageTotals,
} from './store-records.js';

export interface Store {
  inbox: InboxRepository;
  conversations: ConversationRepository;
  turns: TurnRepository;
  approvals: ApprovalRepository;
  grants: GrantRepository;
  audit: AuditRepository;
  memories: MemoryRepository;
  agentRuns: AgentRunRepository;
  routing: RoutingRepository;
  usage: UsageRepository;
  conversationEvents: ConversationEventRepository;
  files: FileRepository;
  stops: StopRepository;
  feedback: FeedbackRepository;
  schedules: ScheduleRepository;
  budgets: BudgetRepository;
  reads: ReadRepository;
  connections: ConnectionRepository;
  inputWaits: InputWaitRepository;
  modelSlots: ModelSlotRepository;
  installations: InstallationRepository;
  feishuTenants: FeishuTenantRepository;
  feishuSecrets: FeishuSecretRepository;
  /** Runs `work` with repositories bound to one transaction. */
  transaction<T>(work: (store: Store) => Promise<T>): Promise<T>;
}
