import { App, HTTPReceiver } from '@slack/bolt';

/**
 * The baseline Slack app: Bolt's own HTTPReceiver and an `app_mention` listener, nothing else. In `ack`
 * mode the listener does nothing (Bolt acknowledges before listeners run); in `echo` mode it answers
 * in the thread with chat.postMessage. It stores nothing.
 *
 * Environment: PORT, SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN, SLACK_API_URL, BENCH_REPLY.
 */

const mode = process.argv[2] === 'echo' ? 'echo' : 'ack';
const reply = process.env.BENCH_REPLY || 'ok';

const receiver = new HTTPReceiver({
  signingSecret: process.env.SLACK_SIGNING_SECRET ?? '',
  endpoints: '/slack/events',
  customRoutes: [
    {
      path: '/healthz',
      method: 'GET',
      handler: (_request, response) => {
        response.writeHead(200);
        response.end('ok');
      },
    },
  ],
});
const app = new App({
  token: process.env.SLACK_BOT_TOKEN ?? '',
  botId: 'B0BUTLER',
  botUserId: 'U0BUTLER',
  receiver,
  clientOptions: { slackApiUrl: process.env.SLACK_API_URL ?? 'http://127.0.0.1:9/api/' },
});

app.event('app_mention', async ({ event, client }) => {
  if (mode === 'ack') return;
  await client.chat.postMessage({
    channel: event.channel,
    thread_ts: event.thread_ts ?? event.ts,
    text: reply,
  });
});

await app.start(Number(process.env.PORT));
