import type { PreparedMessage } from '../../core/contracts/adapter.js';
import type { InboundMessage } from '../../core/contracts/events.js';
import type { Logger } from '../../core/contracts/logger.js';
import { FeishuApiError } from './feishu-api-error.js';
import type { FeishuApi, FeishuProfile } from './feishu-api-types.js';

/**
 * People's names for the model, from the contact API. Events carry only open_ids, so without this a group turn
 * reads `ou_7a1c…: restart payments`. Optional: without the contact scopes Butler keeps the open_id and says so
 * once in its log.
 */

const nameTtlMilliseconds = 60 * 60_000;
/** A failed lookup (network, rate limit, a person outside the app's contact range) is retried after this. */
const failureTtlMilliseconds = 5 * 60_000;
/** After Feishu says a scope is missing, ask again only this often (an admin may grant it meanwhile). */
const scopeRecheckMilliseconds = 10 * 60_000;
const cacheSize = 5000;

export const contactScopeHint =
  'Feishu shows people to Butler by open_id only: add the scopes contact:contact.base:readonly and ' +
  'contact:user.base:readonly (Permissions & Scopes) and publish a new version so Butler can use their names.';

/** `@ou_…` as normalize writes a mention whose name the event did not carry. */
const openIdMention = /@(ou_[0-9A-Za-z]+)/g;

const unknownProfile: FeishuProfile = { name: undefined, timezone: undefined };

export class FeishuUserNames {
  private readonly cache = new Map<string, { profile: FeishuProfile; until: number }>();
  private scopeMissingUntil = 0;
  private hinted = false;

  constructor(
    private readonly api: Pick<FeishuApi, 'userProfile'>,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The hint is logged the first time Feishu shows a scope is missing, never again in this process. */
  private hintOnce(reason: string): void {
    if (this.hinted) return;
    this.hinted = true;
    this.logger.warn({ reason }, contactScopeHint);
  }

  /** The name of `openId` in `tenantKey`, or undefined; never throws. */
  async get(tenantKey: string, openId: string): Promise<string | undefined> {
    return (await this.profile(tenantKey, openId)).name;
  }

  /** Name and time zone of `openId` in `tenantKey` from one contact answer, each undefined when unknown; never throws. */
  async profile(tenantKey: string, openId: string): Promise<FeishuProfile> {
    const key = `${tenantKey}:${openId}`;
    const now = this.now();
    const hit = this.cache.get(key);
    if (hit && now < hit.until) return hit.profile;
    if (now < this.scopeMissingUntil) return hit?.profile ?? unknownProfile;
    let profile: FeishuProfile;
    try {
      profile = await this.api.userProfile(openId);
    } catch (error) {
      if (error instanceof FeishuApiError && error.scopeMissing) {
        this.scopeMissingUntil = now + scopeRecheckMilliseconds;
        this.hintOnce('contact API scope missing');
        return hit?.profile ?? unknownProfile;
      }
      this.logger.debug({ user: openId, err: error }, 'Feishu contact lookup failed; keeping the open_id');
      this.remember(key, hit?.profile ?? unknownProfile, now + failureTtlMilliseconds);
      return hit?.profile ?? unknownProfile;
    }
    // The call is allowed but the answer has no name: the field scope is what is missing.
    if (profile.name === undefined)
      this.hintOnce('contact:user.base:readonly missing (no name in the answer)');
    this.remember(key, profile, now + nameTtlMilliseconds);
    return profile;
  }

  private remember(key: string, profile: FeishuProfile, until: number): void {
    if (this.cache.size >= cacheSize) this.cache.clear();
    this.cache.set(key, { profile, until });
  }

  /** Replaces `@ou_…` with `@Name` where the contact API knows the person. */
  async resolveText(tenantKey: string, text: string): Promise<string> {
    const ids = [...new Set([...text.matchAll(openIdMention)].map((match) => match[1] as string))];
    if (ids.length === 0) return text;
    const names = new Map<string, string>();
    for (const id of ids) {
      const name = await this.get(tenantKey, id);
      if (name) names.set(id, name);
    }
    return text.replace(openIdMention, (match, id: string) => {
      const name = names.get(id);
      return name ? `@${name}` : match;
    });
  }
}

/**
 * Off the acknowledgement path (the core's `prepare`): the sender's name and time zone (what "at 9:00" means to
 * them; looked up in direct chats too, for that), names for mentions the event left without one, and the messages
 * a merged forward holds (`readForward`).
 */
export async function prepareFeishuMessage(
  names: FeishuUserNames,
  message: InboundMessage,
  readForward: (messageId: string) => Promise<string>,
): Promise<PreparedMessage> {
  const tenantKey = message.address.workspace;
  const text = message.forwardsHistory
    ? await readForward(message.messageId)
    : await names.resolveText(tenantKey, message.text);
  const profile = await names.profile(tenantKey, message.user.id);
  const name = message.user.name ?? profile.name;
  const user = {
    ...message.user,
    ...(name ? { name } : {}),
    ...(profile.timezone ? { timezone: profile.timezone } : {}),
  };
  return { message: { ...message, text, user } };
}
