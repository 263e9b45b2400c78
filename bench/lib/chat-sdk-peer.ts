import { startBenchServer } from './butler-process.js';
import type { FakePlatformUrls } from './fake-platforms.js';
import { slackSecrets } from './platform-requests.js';

/** The peer bot (bench/servers/chat-sdk-peer.ts) in its own process, pointed at the benchmark's fakes. */

export const peerLabel = 'Chat SDK + AI SDK peer';

export function startChatSdkPeer(fakes: Pick<FakePlatformUrls, 'slackUrl' | 'modelUrl'>) {
  return startBenchServer({
    name: peerLabel,
    script: 'bench/servers/chat-sdk-peer.ts',
    env: {
      SLACK_SIGNING_SECRET: slackSecrets.signingSecret,
      SLACK_BOT_TOKEN: slackSecrets.botToken,
      SLACK_API_URL: fakes.slackUrl,
      MODEL_BASE_URL: fakes.modelUrl,
    },
    readyPath: '/healthz',
  });
}
