import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { DecisionResult } from '../../core/contracts/approval-card.js';
import type { Logger } from '../../core/contracts/logger.js';
import { outcomeIcons } from './approval-parts.js';
import { escapedWithin } from './block-kit.js';
import { renderHomeView } from './home-view.js';
import { type HomeClick, parseHomeClick } from './interactions.js';
import { isRecord } from './parse.js';
import { errorFields, type SlackApi } from './slack-api.js';

/** The home tab's buttons, for the Bolt app to route here. */
export { homeActionIds } from './interactions.js';

export interface AppHomeDependencies {
  intake: ButlerIntake;
  api: SlackApi;
  logger: Logger;
  /** A decision still being stored by then is acknowledged anyway (Slack shows an error after 3 s). */
  acknowledgeWithinMs: number;
  /** The installation's workspace: a page shows only what belongs there. */
  workspace?: () => string | undefined;
}

type Ack = () => Promise<void>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** What the republished tab opens with after a click: the outcome, or why nothing changed. */
function noticeOf(click: HomeClick, result: DecisionResult | undefined): string {
  if (!result) return ':warning: Butler could not record that decision. Please try again in a moment.';
  if (!result.ok) return `:information_source: ${escapedWithin(result.message, 500)}`;
  const call = result.card.calls.find((candidate) => candidate.approvalId === click.approvalId);
  const done = call ? `${outcomeIcons[call.status]} \`${call.toolName}\` ${call.status}.` : 'Decided.';
  return result.message ? `${done} ${escapedWithin(result.message, 500)}` : done;
}

/**
 * Slack's App Home: `app_home_opened` (the Home tab) publishes the person's page, and its Approve / Reject
 * buttons decide through the core like a card click, checked against who Slack says clicked. The page is
 * published again after each click, showing what the click did.
 */
export function createAppHomeHandlers(dependencies: AppHomeDependencies) {
  const { intake, api, logger } = dependencies;

  /** Reads the person's page and publishes it; never throws (a page not shown is logged). */
  async function publish(userId: string, notice?: string): Promise<void> {
    try {
      const home = await intake.home({ platform: 'slack', id: userId }, dependencies.workspace?.());
      await api.publishView({ userId, view: renderHomeView(home, notice) });
      logger.info(
        { platform: 'slack', user: userId, approvals: home.approvals.length },
        'App Home published',
      );
    } catch (error) {
      logger.warn({ platform: 'slack', user: userId, ...errorFields(error) }, 'App Home not published');
    }
  }

  /** `app_home_opened` on the Home tab (not Messages): the page is published after the event is acknowledged. */
  async function homeOpened(_body: unknown, event: unknown): Promise<void> {
    if (!isRecord(event) || event.tab !== 'home' || typeof event.user !== 'string') return;
    // Reading and publishing can outlast the event's acknowledgement deadline: a redelivery would publish again.
    void publish(event.user);
  }

  async function homeClick(body: unknown, ack: Ack): Promise<void> {
    const click = parseHomeClick(body);
    if (!click) {
      await ack();
      logger.warn({ platform: 'slack' }, 'home tab click outside a home tab, or without a request or user');
      return;
    }
    const fields = { platform: 'slack', approvalId: click.approvalId, user: click.user.id };
    const deciding = intake
      .decide({
        approvalId: click.approvalId,
        platform: 'slack',
        user: click.user,
        decision: click.decision,
        offCard: true,
      })
      .then(
        (result) => {
          logger.info(
            { ...fields, decision: click.decision, ok: result.ok, code: result.ok ? undefined : result.code },
            'home tab decision',
          );
          return result;
        },
        (error: unknown) => {
          logger.error({ ...fields, ...errorFields(error) }, 'home tab decision failed');
          return undefined;
        },
      );
    // Acknowledged once stored, but not past Slack's deadline: an acknowledged click is never redelivered.
    await Promise.race([deciding, sleep(dependencies.acknowledgeWithinMs)]);
    await ack();
    await publish(click.user.id, noticeOf(click, await deciding));
  }

  return { homeOpened, homeClick };
}

export type AppHomeHandlers = ReturnType<typeof createAppHomeHandlers>;
