import { randomUUID } from 'node:crypto';
import { asc, eq, is, sql } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { ApprovalService } from '../../src/core/approvals/approval-service.js';
import { encodeConversationKey } from '../../src/core/contracts/conversation-key.js';
import type {
  ChatUser,
  ConversationAddress,
  InboundMessage,
  Platform,
} from '../../src/core/contracts/events.js';
import { silentLogger } from '../../src/core/contracts/logger.js';
import { noopObserver } from '../../src/core/contracts/observer.js';
import type { ApprovalRecord, Store } from '../../src/core/contracts/store.js';
import { ButlerService } from '../../src/core/inbox/intake.js';
import { PeopleDirectory, type PersonListing } from '../../src/core/people/index.js';
import { ApprovalPolicy } from '../../src/core/tools/policy.js';
import type { Database } from '../../src/storage/database.js';
import * as schema from '../../src/storage/schema.js';
import { createStore } from '../../src/storage/store.js';
import { openTestDatabase } from './database.js';

/**
 * The real core intake for driving a platform connector: `ButlerService` with the real approval service and
 * policy over a fresh test database (Postgres when TEST_DATABASE_URL is set, else PGlite), wired as
 * `src/app.ts` wires it. No worker runs, so nothing is answered: tests read what was stored and decided.
 */

export interface CoreIntakeOptions {
  /** Configured approvers per platform, as in the config file's `approvers`. */
  approvers?: Partial<Record<Platform, string[]>>;
  /** `people:`: who is who across platforms. */
  people?: PersonListing[];
  /** How long "Approve for this conversation" lasts (config `standingApprovalHours`); default 8. */
  standingApprovalHours?: number;
  /** Distinct approvers per risk (config `approvalPolicy.quorum`); default one. */
  quorum?: { medium?: number; high?: number };
}

export interface PendingApprovalOptions {
  platform: Platform;
  requester: ChatUser;
  risk?: 'medium' | 'high';
  /** Default: an hour from now. A past deadline makes an approval that has expired but was not yet swept. */
  expiresAt?: Date;
  /** The conversation the approval belongs to. */
  address?: ConversationAddress;
  /** The platform message that shows its card; default `cardMessages[platform]`. */
  cardMessageId?: string;
}

/** The message a pending approval's card is on, per platform: what a click on it names. */
export const cardMessages: Record<Platform, string> = {
  slack: '1700000000.000900',
  feishu: 'om_card',
  console: 'console-card',
  api: 'api-card',
};

/** A lock held by another transaction until `release()`, as a concurrent writer would hold it. */
export interface HeldLock {
  release(): Promise<void>;
}

export interface CoreIntake {
  /** What the connector under test is given. */
  readonly intake: ButlerService;
  readonly store: Store;
  /** Inbound messages in the inbox, in the order they were accepted. */
  storedMessages(): Promise<InboundMessage[]>;
  /** Makes Butler a participant of the conversation, as answering in it would. */
  knowConversation(address: ConversationAddress): Promise<void>;
  /** A pending approval of `restart_service`, with the configured approvers of its platform. */
  pendingApproval(options: PendingApprovalOptions): Promise<ApprovalRecord>;
  /** A card of several calls waiting together (one model step): one approval per service, one batch. */
  pendingBatch(options: PendingApprovalOptions & { services: string[] }): Promise<ApprovalRecord[]>;
  approval(id: string): Promise<ApprovalRecord>;
  /**
   * Holds a lock that makes storing an inbound message wait. On PGlite (one connection) every query
   * waits, the test's own included: read the database only after `release()`.
   */
  holdInbox(): Promise<HeldLock>;
  /** Holds the approval's row lock, as a concurrent decision does: deciding it waits. Same PGlite caveat. */
  holdApproval(id: string): Promise<HeldLock>;
  /** The database refuses to store inbound events until the returned function is called. */
  refuseInboxWrites(): Promise<() => Promise<void>>;
  /** The database refuses to decide approvals until the returned function is called. */
  refuseApprovalUpdates(): Promise<() => Promise<void>>;
  /** Empties every table (between tests). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

const tables = Object.values(schema).filter((value) => is(value, PgTable));

/** A trigger that makes every `operation` on `table` fail, as a database in trouble would. */
async function refuseWrites(
  db: Database,
  table: PgTable,
  operation: 'insert' | 'update',
): Promise<() => Promise<void>> {
  await db.execute(sql`create or replace function butler_test_refuse_write() returns trigger
    language plpgsql as $$ begin raise exception 'database unavailable'; end $$`);
  await db.execute(sql`create trigger butler_test_refuse_write before ${sql.raw(operation)} on ${table}
    for each statement execute function butler_test_refuse_write()`);
  return async () => {
    await db.execute(sql`drop trigger butler_test_refuse_write on ${table}`);
  };
}

export async function startCoreIntake(options: CoreIntakeOptions = {}): Promise<CoreIntake> {
  const database = await openTestDatabase();
  const { db } = database;
  const store = createStore(db);
  const policy = new ApprovalPolicy(options.approvers ?? {}, new PeopleDirectory(options.people ?? []));
  // No worker: waking it is a no-op, and nothing claims what was accepted.
  const approvals = new ApprovalService(store, policy, noopObserver, silentLogger, () => {}, {
    standingApprovalHours: options.standingApprovalHours ?? 8,
    ...(options.quorum ? { quorum: options.quorum } : {}),
  });
  const intake = new ButlerService(store, approvals, {}, policy.people, silentLogger, () => {});
  const held = new Set<HeldLock>();

  async function hold(take: (tx: Transaction) => Promise<unknown>): Promise<HeldLock> {
    let markHeld = () => {};
    let release = () => {};
    const isHeld = new Promise<void>((resolve) => {
      markHeld = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const transaction = db.transaction(async (tx) => {
      await take(tx);
      markHeld();
      await released;
    });
    await Promise.race([isHeld, transaction]);
    const lock: HeldLock = {
      release: async () => {
        held.delete(lock);
        release();
        await transaction;
      },
    };
    held.add(lock);
    return lock;
  }

  /** `restart_service` calls of one model step, one per service, waiting on one card. */
  async function createBatch(options: PendingApprovalOptions, services: readonly string[]) {
    const address = options.address ?? {
      platform: options.platform,
      workspace: 'workspace',
      channel: 'channel',
      thread: 'main',
    };
    const batchId = randomUUID();
    const toolCalls = services.map((service, index) => ({
      id: `call_restart_${index}`,
      name: 'restart_service',
      arguments: JSON.stringify({ service }),
    }));
    const created: ApprovalRecord[] = [];
    for (const [index, service] of services.entries()) {
      created.push(
        await store.approvals.create(
          approvals.newApproval({
            batchId,
            conversationKey: encodeConversationKey(address),
            platform: options.platform,
            toolName: 'restart_service',
            toolCallId: `call_restart_${index}`,
            arguments: { service },
            risk: options.risk ?? 'high',
            summary: `Restart ${service}`,
            requestedBy: options.requester,
            requesters: [options.requester],
            expiresAt: options.expiresAt ?? new Date(Date.now() + 60 * 60_000),
            resume: { turnId: 'turn', assistant: { content: '', toolCalls }, results: [] },
          }),
        ),
      );
    }
    await store.approvals.setCardMessage(batchId, options.cardMessageId ?? cardMessages[options.platform]);
    return created.map((approval) => ({
      ...approval,
      cardMessageId: options.cardMessageId ?? cardMessages[options.platform],
    }));
  }

  const releaseAll = () => Promise.all([...held].map((lock) => lock.release()));

  return {
    intake,
    store,
    async storedMessages() {
      const rows = await db
        .select({ payload: schema.inboundEvents.payload })
        .from(schema.inboundEvents)
        .where(eq(schema.inboundEvents.kind, 'message'))
        .orderBy(asc(schema.inboundEvents.id));
      return rows.flatMap(({ payload }) => (payload.kind === 'message' ? [payload] : []));
    },
    async knowConversation(address) {
      await store.conversations.ensure(encodeConversationKey(address), address);
    },
    async pendingApproval(approval) {
      const [created] = await createBatch(approval, ['payments-api']);
      if (!created) throw new Error('no approval was created');
      return created;
    },
    pendingBatch: (options) => createBatch(options, options.services),
    async approval(id) {
      const approval = await store.approvals.get(id);
      if (!approval) throw new Error(`approval ${id} is not in the database`);
      return approval;
    },
    holdInbox: () => hold((tx) => tx.execute(sql`lock table ${schema.inboundEvents} in exclusive mode`)),
    holdApproval: (id) =>
      hold((tx) =>
        tx
          .select({ id: schema.approvals.id })
          .from(schema.approvals)
          .where(eq(schema.approvals.id, id))
          .for('update'),
      ),
    refuseInboxWrites: () => refuseWrites(db, schema.inboundEvents, 'insert'),
    refuseApprovalUpdates: () => refuseWrites(db, schema.approvals, 'update'),
    async reset() {
      await releaseAll();
      await db.execute(sql`drop trigger if exists butler_test_refuse_write on ${schema.inboundEvents}`);
      await db.execute(sql`drop trigger if exists butler_test_refuse_write on ${schema.approvals}`);
      // DELETE, not TRUNCATE: on a few rows it is several times faster, on Postgres especially.
      await db.transaction(async (tx) => {
        for (const table of tables) await tx.delete(table);
      });
    },
    async close() {
      await releaseAll();
      await database.close();
    },
  };
}
