import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RecordedRequest, startFakeModelServer } from '../tests/helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../tests/helpers/fake-slack-api.js';
import { type Benchmark, type BenchmarkContext, profilingFlags } from './lib/benchmark.js';
import { type ButlerProcess, startButlerProcess } from './lib/butler-process.js';
import { withBenchDatabase } from './lib/database.js';
import { keepAliveAgent, post } from './lib/load.js';
import { bullets, table } from './lib/markdown.js';
import { slackApproveClick, slackMention, slackUserId } from './lib/platform-requests.js';
import { milliseconds, summarize } from './lib/stats.js';

/**
 * 6. Approval: N conversations each park on a high-risk HTTP tool and post an approval card; then an
 * approver clicks Approve on all N cards at once (signed block_actions form posts, Slack's real click
 * path). Measured per click: the click's acknowledgement, the card's update at the fake Slack API, and
 * the tool's HTTP request arriving at a local endpoint.
 */

const concurrentApprovals = 20;
const approver = { id: 'U0APPROVER', name: 'olga' };
const channel = 'C0APPROVALS';

/** The tool's endpoint: records when each service's restart request arrived. */
async function startToolEndpoint() {
  const started = new Map<string, number>();
  const server = createServer((request, response) => {
    const arrived = Date.now();
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const service = (JSON.parse(body || '{}') as { service?: string }).service ?? '';
      if (!started.has(service)) started.set(service, arrived);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"restarted":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    started,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The model asks to restart the service named in the message, and answers in words after the tool ran. */
function modelScript(request: RecordedRequest) {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: 'Done: the service restarted cleanly.' };
  const service = /restart (svc-[\w-]+)/.exec(String(last?.content ?? ''))?.[1] ?? 'svc-unknown';
  return { toolCalls: [{ name: 'restart_service', arguments: JSON.stringify({ service }) }] };
}

interface Card {
  service: string;
  threadTs: string;
  cardTs: string;
  approvalId: string;
}

function cardsPosted(slack: FakeSlackApi, threads: ReadonlyMap<string, string>): Card[] {
  const cards: Card[] = [];
  for (const message of slack.messages.values()) {
    const service = message.threadTs ? threads.get(message.threadTs) : undefined;
    if (!service || !message.threadTs || !JSON.stringify(message.blocks ?? []).includes('butler_approve'))
      continue;
    const actions = (message.blocks as Array<{ type?: string; elements?: Array<{ value?: string }> }>).find(
      (block) => block.type === 'actions',
    );
    const approvalId = actions?.elements?.[0]?.value;
    if (approvalId) cards.push({ service, threadTs: message.threadTs, cardTs: message.ts, approvalId });
  }
  return cards;
}

async function waitFor<T>(
  probe: () => T | undefined,
  what: string,
  timeoutMilliseconds = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMilliseconds;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Sample {
  acknowledged: number;
  cardUpdated: number;
  toolStarted: number;
  continued: number;
}

async function round(
  index: number,
  butler: ButlerProcess,
  slack: FakeSlackApi,
  tool: Awaited<ReturnType<typeof startToolEndpoint>>,
): Promise<Sample[]> {
  const agent = keepAliveAgent(concurrentApprovals);
  const url = new URL(`${butler.url}/slack/events`);
  const threads = new Map<string, string>();
  for (let conversation = 0; conversation < concurrentApprovals; conversation++) {
    const service = `svc-${index}-${conversation}`;
    const mention = slackMention({
      channel,
      user: slackUserId(conversation),
      text: `please restart ${service}`,
    });
    threads.set(mention.ts, service);
    await post(agent, url, mention.request);
  }
  const cards = await waitFor(() => {
    const posted = cardsPosted(slack, threads);
    return posted.length === concurrentApprovals ? posted : undefined;
  }, `${concurrentApprovals} approval cards`);
  // Let the turns finish parking before the clicks arrive.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const clickedAt = new Map<string, number>();
  const answers = await Promise.all(
    cards.map((card) => {
      clickedAt.set(card.service, Date.now());
      return post(
        agent,
        url,
        slackApproveClick({ ...card, channel, messageTs: card.cardTs, user: approver }),
      );
    }),
  );
  agent.destroy();
  const updatedAt = (card: Card) =>
    slack.calls.find((call) => call.method === 'chat.update' && call.args.ts === card.cardTs)?.at;
  const continuedAt = (card: Card) =>
    slack.calls.find(
      (call) =>
        call.method === 'chat.startStream' &&
        call.args.thread_ts === card.threadTs &&
        call.at > (clickedAt.get(card.service) ?? 0),
    )?.at;
  await waitFor(
    () =>
      cards.every((card) => updatedAt(card) && tool.started.has(card.service) && continuedAt(card))
        ? true
        : undefined,
    'every card update, tool call and continuation',
  );
  return cards.map((card, position) => {
    const clicked = clickedAt.get(card.service) ?? 0;
    return {
      acknowledged: answers[position]?.milliseconds ?? Number.NaN,
      cardUpdated: (updatedAt(card) ?? Number.NaN) - clicked,
      toolStarted: (tool.started.get(card.service) ?? Number.NaN) - clicked,
      continued: (continuedAt(card) ?? Number.NaN) - clicked,
    };
  });
}

async function run(context: BenchmarkContext) {
  const rounds = context.quick ? 1 : 5;
  const slack = await startFakeSlackApi();
  const model = await startFakeModelServer();
  model.setFallback(modelScript);
  const tool = await startToolEndpoint();
  try {
    return await withBenchDatabase(async (databaseUrl) => {
      const butler = await startButlerProcess({
        name: 'Butler (approvals)',
        database: { kind: 'postgres', url: databaseUrl },
        slackApiUrl: slack.url,
        modelUrl: model.baseUrl,
        config: {
          approvers: { slack: [approver.id] },
          tools: [
            {
              name: 'restart_service',
              description: 'Restart a production service by name.',
              risk: 'high',
              input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
              http: { method: 'POST', url: `${tool.url}/restart` },
            },
          ],
        },
        nodeFlags: profilingFlags(context, 'approval'),
      });
      try {
        const samples: Sample[] = [];
        for (let index = 0; index < rounds; index++) {
          context.log(`approval: round ${index + 1}/${rounds}, ${concurrentApprovals} concurrent clicks`);
          samples.push(...(await round(index, butler, slack, tool)));
        }
        const line = (label: string, values: number[]) => {
          const summary = summarize(values);
          return [
            label,
            String(summary.count),
            milliseconds(summary.p50),
            milliseconds(summary.p99),
            milliseconds(summary.max),
          ];
        };
        const markdown = [
          table(
            ['click → …', 'samples', 'p50 ms', 'p99 ms', 'max ms'],
            [
              line(
                'acknowledged (HTTP 200 to Slack)',
                samples.map((sample) => sample.acknowledged),
              ),
              line(
                'card updated (chat.update at the fake Slack API)',
                samples.map((sample) => sample.cardUpdated),
              ),
              line(
                'tool started (its HTTP request arrives)',
                samples.map((sample) => sample.toolStarted),
              ),
              line(
                'continuation reply starts (chat.startStream)',
                samples.map((sample) => sample.continued),
              ),
            ],
          ),
          '',
          bullets([
            `${rounds} round(s): ${concurrentApprovals} conversations each park on a high-risk HTTP tool (\`restart_service\`) and post an approval card; ` +
              `then ${concurrentApprovals} signed block_actions form posts (Approve) arrive at once, one per card.`,
            'Butler records the decision (first valid click wins, in one transaction with the resume event), then acknowledges the click and updates the card; the worker claims the resume event, runs the tool once, and asks the model to continue.',
            'Butler on Postgres with its default config (8 worker slots); model, Slack API and tool endpoint are local fakes answering at once.',
          ]),
        ].join('\n');
        return { markdown };
      } finally {
        await butler.stop();
      }
    });
  } finally {
    await tool.close();
    await model.close();
    await slack.close();
  }
}

export const approvalBenchmark: Benchmark = {
  name: 'approval',
  title: '6. Approval: click → card updated and tool started, 20 concurrent approvals',
  run,
};
