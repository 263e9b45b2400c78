import { createServer } from 'node:http';
import * as lark from '@larksuiteoapi/node-sdk';

/**
 * The baseline Feishu app: the Lark SDK's EventDispatcher behind `adaptDefault` (it decrypts, checks the
 * signature, and answers after the handler resolves) with an `im.message.receive_v1` handler that does
 * nothing. It stores nothing.
 *
 * Environment: PORT, FEISHU_ENCRYPT_KEY, FEISHU_VERIFICATION_TOKEN.
 */

const dispatcher = new lark.EventDispatcher({
  encryptKey: process.env.FEISHU_ENCRYPT_KEY ?? '',
  verificationToken: process.env.FEISHU_VERIFICATION_TOKEN ?? '',
}).register({
  'im.message.receive_v1': async () => {},
});
const handler = lark.adaptDefault('/feishu/events', dispatcher, { autoChallenge: true });

createServer((request, response) => {
  if (request.url === '/healthz') {
    response.writeHead(200);
    response.end('ok');
    return;
  }
  handler(request, response).catch(() => {
    response.writeHead(500);
    response.end();
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
