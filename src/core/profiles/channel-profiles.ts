import type { Delegator } from '../agents/delegator.js';
import type { Router } from '../agents/router.js';
import type { ConversationAddress } from '../contracts/events.js';
import type { ModelClient } from '../model/model-client.js';
import type { ToolSet } from '../tools/registry.js';
import { firstCovering, type ProfileRule } from './profile-rule.js';

/** What shapes one turn: its conversation's profile, or Butler's defaults where none matches. */
export interface TurnProfile {
  /** The matched profile's name; absent where the conversation keeps the defaults. */
  name?: string;
  /** The profile's additions to the system prompt. */
  instructions?: string;
  model: ModelClient | undefined;
  /** The tools offered, and the only ones a call may reach. */
  tools: ToolSet;
  /** Absent: nothing to delegate to here. */
  delegator?: Delegator;
  router?: Router;
}

/** A configured profile with what it was built into at start-up (its model client, tools, agents). */
export interface ChannelProfile extends ProfileRule {
  turn: TurnProfile;
}

/**
 * The configured profiles, first match wins. Built once at start-up; matching reads only the address, so a
 * continuation after a decision (or a scheduled run) gets its conversation's profile as a message would.
 */
export class ChannelProfiles {
  constructor(
    private readonly profiles: readonly ChannelProfile[],
    private readonly defaults: TurnProfile,
  ) {}

  forTurn(address: ConversationAddress): TurnProfile {
    return firstCovering(this.profiles, address)?.turn ?? this.defaults;
  }
}
