import type { z } from 'zod';
import type { LimitState } from '../../core/budgets/index.js';
import type { ButlerIntake } from '../../core/contracts/adapter.js';
import { encodeConversationKey } from '../../core/contracts/conversation-key.js';
import type { EventBus } from '../../core/contracts/event-bus.js';
import type { ConversationAddress } from '../../core/contracts/events.js';
import { isUuid } from '../../core/contracts/ids.js';
import type { Store } from '../../core/contracts/store.js';
import { apiAddress } from './conversation-routes.js';
import { ApiError, readJson, sendJson } from './http-json.js';
import type { Route } from './routes.js';
import {
  approvalsQuery,
  auditQuery,
  conversationsQuery,
  decisionBody,
  describeIssues,
  parseQuery,
  usageQuery,
} from './schemas.js';
import { SseStream } from './sse.js';
import type { StreamSlots } from './stream-slots.js';
import { inTenants, tenantPrefixes } from './tenant-scope.js';

/** Deciding approvals, and what admins read: conversations, approvals, the audit log, usage, live events. */

export interface AdminRouteDependencies {
  intake: ButlerIntake;
  store: Store;
  bus: EventBus | undefined;
  /** A live-events client whose socket stays full for this long is dropped. */
  slowConsumerMs: number;
  streams: Set<SseStream>;
  slots: StreamSlots;
  /** The channel profile a conversation uses (absent or undefined: the defaults). */
  profileOf?: (address: ConversationAddress) => string | undefined;
  /** Where each configured budget stands now (absent: none configured). */
  budgets?: () => Promise<readonly LimitState[]>;
}

/** A budget limit as `GET /budgets` lists it: what it caps, for whom, and how much of it is used. */
const budgetView = ({ budget, label, limit, max, used, fraction, period }: LimitState) => ({
  scope: budget.scope,
  platform: budget.platform,
  id: budget.id,
  name: label,
  limit,
  max,
  used,
  fraction,
  period,
  warnAt: budget.warnAt,
  onExceeded: budget.onExceeded,
});

/** The query, or a 400 naming each bad parameter. */
export function query<T>(schema: z.ZodType<T>, params: URLSearchParams): T {
  const parsed = parseQuery(schema, params);
  if (!parsed.ok) throw new ApiError(400, 'invalid_query', parsed.issues.join('; '));
  return parsed.value;
}

const decisionStatus = { not_found: 404, not_authorized: 403, already_decided: 409, expired: 409 } as const;

export function adminRoutes(deps: AdminRouteDependencies): Route[] {
  const { store } = deps;
  const profile = (address: ConversationAddress) => deps.profileOf?.(address) ?? null;
  /**
   * A request outside the caller's tenants is, to it, no request at all. A batch's calls are all of one
   * conversation: its first names the tenant.
   */
  async function requireInTenants(
    asked: { approvalId: string } | { batchId: string },
    tenants: readonly string[] | undefined,
  ) {
    if (tenants === undefined) return;
    const id = 'approvalId' in asked ? asked.approvalId : asked.batchId;
    const [first] = !isUuid(id)
      ? []
      : 'approvalId' in asked
        ? [await store.approvals.get(id)]
        : await store.approvals.listBatch(id);
    if (!first || !inTenants(tenants, first.conversationKey))
      throw new ApiError(404, 'not_found', 'No such approval request.');
  }
  return [
    {
      // Who the key is and what it may do (a client shows only what it may use).
      method: 'GET',
      pattern: /^\/me$/,
      scope: 'any',
      tenants: 'narrowed',
      async handle({ response, caller }) {
        sendJson(response, 200, {
          name: caller.name,
          scopes: caller.scopes,
          ...(caller.tenants ? { tenants: caller.tenants } : {}),
        });
      },
    },
    {
      method: 'POST',
      pattern: /^\/approvals\/([^/]+)\/decision$/,
      scope: 'approve',
      tenants: 'narrowed',
      async handle({ request, response, caller, params, query: search }) {
        const parsed = decisionBody.safeParse(await readJson(request));
        if (!parsed.success) throw new ApiError(400, 'invalid_body', describeIssues(parsed.error, 'body'));
        await requireInTenants({ approvalId: params[0] ?? '' }, tenantPrefixes(caller, search));
        const result = await deps.intake.decide({
          platform: 'api',
          user: { id: caller.name, name: caller.name },
          approvalId: params[0] ?? '',
          decision: parsed.data.decision,
          ...(parsed.data.reason ? { reason: parsed.data.reason } : {}),
        });
        if (!result.ok) throw new ApiError(decisionStatus[result.code] ?? 409, result.code, result.message);
        const call = result.card.calls.find((candidate) => candidate.approvalId === params[0]);
        sendJson(response, 200, {
          ok: true,
          status: call?.status,
          ...(result.message ? { message: result.message } : {}),
        });
      },
    },
    {
      method: 'GET',
      pattern: /^\/conversations$/,
      scope: 'read',
      tenants: 'narrowed',
      async handle({ response, caller, query: params }) {
        const { cursor, limit } = query(conversationsQuery, params);
        const page = await store.reads.conversations({
          ...(cursor ? { cursor } : {}),
          limit,
          tenants: tenantPrefixes(caller, params),
        });
        const usage = await store.usage.byConversation(page.items.map((item) => item.key));
        const items = page.items.map((item) => ({
          ...item,
          profile: profile(item.address),
          costUsd: usage.get(item.key)?.costUsd ?? null,
        }));
        sendJson(response, 200, { ...page, items });
      },
    },
    {
      method: 'GET',
      pattern: /^\/conversations\/([^/]+)$/,
      scope: 'read',
      tenants: 'narrowed',
      async handle({ response, caller, params, query: search }) {
        const raw = params[0] ?? '';
        // A full conversation key, or the id of one of the caller's own API conversations.
        const key = raw.includes(':') ? raw : encodeConversationKey(apiAddress(caller, raw));
        const detail = inTenants(tenantPrefixes(caller, search), key)
          ? await store.reads.conversation(key, 200)
          : undefined;
        if (!detail) throw new ApiError(404, 'not_found', 'No such conversation.');
        sendJson(response, 200, { ...detail, profile: profile(detail.address) });
      },
    },
    {
      method: 'GET',
      pattern: /^\/budgets$/,
      scope: 'read',
      async handle({ response }) {
        const states = (await deps.budgets?.()) ?? [];
        sendJson(response, 200, { items: states.map(budgetView) });
      },
    },
    {
      method: 'GET',
      pattern: /^\/approvals$/,
      scope: 'read',
      tenants: 'narrowed',
      async handle({ response, caller, query: params }) {
        const { tenant: _tenant, ...filter } = query(approvalsQuery, params);
        const page = await store.reads.approvals({
          ...filter,
          tenants: tenantPrefixes(caller, params),
        });
        // Whether this key may decide each one, so that a client offers buttons only where they work.
        const user = { platform: 'api' as const, id: caller.name };
        const items = page.items.map((item) => {
          const permission = deps.intake.mayDecide(item, user);
          return {
            ...item,
            mayDecide: permission.allowed,
            ...(permission.allowed ? {} : { whyNot: permission.reason }),
          };
        });
        sendJson(response, 200, { ...page, items });
      },
    },
    ...[
      // A request with every call's arguments whole: what a card's console link opens.
      { pattern: /^\/approvals\/([^/]+)$/, target: (id: string) => ({ approvalId: id }) },
      { pattern: /^\/approval-batches\/([^/]+)$/, target: (id: string) => ({ batchId: id }) },
    ].map(
      ({ pattern, target }): Route => ({
        method: 'GET',
        pattern,
        scope: 'read',
        tenants: 'narrowed',
        async handle({ response, caller, params, query: search }) {
          const asked = target(params[0] ?? '');
          await requireInTenants(asked, tenantPrefixes(caller, search));
          const details = await deps.intake.approvalDetails({ ...asked, platform: 'api' });
          if (!details) throw new ApiError(404, 'not_found', 'No such approval request.');
          sendJson(response, 200, details);
        },
      }),
    ),
    {
      method: 'GET',
      pattern: /^\/audit$/,
      scope: 'read',
      async handle({ response, query: params }) {
        sendJson(response, 200, await store.reads.audit(query(auditQuery, params)));
      },
    },
    {
      method: 'GET',
      pattern: /^\/usage$/,
      scope: 'read',
      tenants: 'narrowed',
      async handle({ response, caller, query: params }) {
        const { groupBy, since, until } = query(usageQuery, params);
        const items = await store.usage.rollup({
          groupBy,
          ...(since ? { since } : {}),
          ...(until ? { until } : {}),
          tenants: tenantPrefixes(caller, params),
        });
        sendJson(response, 200, { groupBy, items });
      },
    },
    {
      method: 'GET',
      pattern: /^\/events$/,
      scope: 'read',
      async handle({ response, caller }) {
        if (!deps.bus) throw new ApiError(503, 'unavailable', 'The live event stream is not running.');
        const release = deps.slots.take(caller.name);
        try {
          const stream = new SseStream(response, deps.streams);
          await followBus(deps.bus, stream, deps.slowConsumerMs);
        } finally {
          release();
        }
      },
    },
  ];
}

/** Relays the bus until the client leaves, or stops reading for too long (it is dropped; turns never wait). */
function followBus(bus: EventBus, stream: SseStream, slowConsumerMs: number): Promise<void> {
  return new Promise((resolve) => {
    let behindSince: number | undefined;
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      unsubscribe();
      stream.end();
      resolve();
    };
    const unsubscribe = bus.subscribe((event) => {
      if (stream.keepingUp) behindSince = undefined;
      else behindSince ??= Date.now();
      // Its socket has been full for too long: what it would buffer next is dropped with it.
      if (behindSince !== undefined && Date.now() - behindSince > slowConsumerMs) return stop();
      stream.send(event);
    });
    stream.onClose(stop);
  });
}
