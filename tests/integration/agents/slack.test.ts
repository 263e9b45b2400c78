import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler, type TestButlerOptions } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { serviceTools } from '../../helpers/platform-butler.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import {
  asForm,
  asJson,
  blockActions,
  directMessage,
  envelope,
  postToSlack,
  signingSecret,
} from '../../unit/slack/payloads.js';
import { freshTs } from '../slack/slack-butler.js';
import { byAgent, delegating } from './agent-fixtures.js';

/**
 * The whole story on Slack: one question in a DM needs two agents; Butler asks both at once (the
 * status line and the reply say so), one needs an approval that an approver gives after Butler restarted,
 * and the person gets one answer built from both.
 */

let slack: FakeSlackApi;
let model: FakeModelServer;
let tools: ToolServer;

beforeAll(async () => {
  slack = await startFakeSlackApi();
  slack.assistantThreads = true;
  model = await startFakeModelServer();
  tools = await startToolServer();
});
afterAll(async () => {
  await tools.close();
  await model.close();
  await slack.close();
});

function options(dataDir: string, databaseUrl?: string): TestButlerOptions {
  return {
    env: {
      SLACK_BOT_TOKEN: 'xoxb-agents',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.url,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
    },
    config: {
      approvers: { slack: ['U0APPROVER'] },
      tools: serviceTools(tools),
      agents: [
        {
          name: 'ops',
          description: 'Restarts production services.',
          instructions: 'You operate production services.',
          tools: ['restart_service'],
        },
        { name: 'docs', description: 'Answers from the handbook.', instructions: 'You know the handbook.' },
      ],
    },
    dataDir,
    ...(databaseUrl ? { databaseUrl } : {}),
  };
}

async function settled(app: TestButler) {
  await app.settle();
  return app;
}

describe(`two agents, one approval across a restart, on Slack (${databaseKind})`, () => {
  // Two Butlers start one after the other (on PGlite, each a WebAssembly Postgres): 7 s alone here, over
  // 20 s with three other files running, so it gets the restart tests' minute.
  it('answers one coherent reply after the approver clicks on the restarted Butler', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-agents-slack-'));
    const first = await startTestButler(options(dataDir));
    let second: TestButler | undefined;
    try {
      const ts = freshTs();
      model.enqueue(delegating(['ops', 'Restart payments-api.'], ['docs', 'What to watch after a restart?']));
      model.enqueueFor(byAgent('ops'), {
        toolCalls: [{ id: 'ops_restart', name: 'restart_service', arguments: '{"service":"payments-api"}' }],
      });
      model.enqueueFor(byAgent('docs'), { text: 'Watch error rates for 10 minutes.' });
      const asked = await postToSlack(
        `${first.url}/slack/events`,
        asJson(envelope(directMessage({ ts, text: 'restart payments-api and tell me what to watch' }))),
      );
      expect(asked.status).toBe(200);
      await settled(first);

      const statuses = slack.callsTo('assistant.threads.setStatus').map((call) => call.args.status);
      expect(statuses).toContain('is asking ops and docs…');
      // A top-level DM is answered in its thread (Slack streams only replies), the card beside the reply.
      const thread = slack.threadMessages('D0ALICE', ts);
      expect(thread.map(shownText)).toContain('_Asking ops and docs…_');
      const card = thread.find((message) => JSON.stringify(message.blocks ?? '').includes('butler_approve'));
      expect(JSON.stringify(card?.blocks)).toContain('Asked by the *ops* agent for');
      expect(tools.requests).toEqual([]);
      await first.stop();

      second = await startTestButler(options(dataDir, first.databaseUrl));
      const approvalId = /"value":"([0-9a-f-]{36})"/.exec(JSON.stringify(card?.blocks))?.[1] ?? '';
      model.enqueueFor(byAgent('ops'), { text: 'payments-api restarted.' });
      model.enqueue({ text: 'Restarted payments-api. Watch error rates for 10 minutes.' });
      const click = await postToSlack(
        `${second.url}/slack/events`,
        asForm(
          blockActions({
            approvalId,
            actionId: 'butler_approve',
            messageTs: card?.ts ?? '',
            threadTs: ts,
            channel: 'D0ALICE',
          }),
        ),
      );
      expect(click.status).toBe(200);
      await settled(second);

      expect(tools.requests.map((request) => request.path)).toEqual(['/restart_service']);
      // The continuation says which agent goes on, then the one answer built from both results.
      expect(slack.threadMessages('D0ALICE', ts).map(shownText).at(-1)).toBe(
        '_Asking ops…_\n\nRestarted payments-api. Watch error rates for 10 minutes.',
      );
      const butlerAfterClick = model.requests.at(-1);
      expect(
        butlerAfterClick?.messages
          .filter((message) => message.role === 'tool')
          .map((message) => message.content),
      ).toEqual(['payments-api restarted.', 'Watch error rates for 10 minutes.']);
    } finally {
      await second?.close();
      await first.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
