import { pino } from 'pino';
import pretty from 'pino-pretty';
import type { Logger } from '../core/contracts/logger.js';

/**
 * Paths that may carry secrets. pino's `*.x` matches one level down only, so top-level names are
 * listed too. Model content is not logged at all (the core logs ids, not text).
 */
const secretKeys = [
  'token',
  'botToken',
  'appToken',
  'apiKey',
  'secret',
  'appSecret',
  'signingSecret',
  'clientSecret',
  'stateSecret',
  'encryptKey',
  'verificationToken',
  'password',
  'authorization',
  'secretKey',
  'publicKey',
  // A message's own credential (Slack's action token) and people's OAuth tokens.
  'grant',
  'action_token',
  'access_token',
  'refresh_token',
];
const redactPaths = [
  ...secretKeys,
  ...secretKeys.map((key) => `*.${key}`),
  'headers.authorization',
  '*.headers.authorization',
  'headers["x-slack-signature"]',
];

export interface LoggerOptions {
  level: string;
  serviceName: string;
  /** Where to write (tests pass a stream); defaults to stdout, human-readable when it is a terminal. */
  destination?: NodeJS.WritableStream;
}

function defaultDestination(): NodeJS.WritableStream {
  if (!process.stdout.isTTY) return process.stdout;
  return pretty({ colorize: true, translateTime: 'HH:MM:ss', ignore: 'pid,hostname,service', sync: true });
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: options.serviceName },
      redact: { paths: redactPaths, censor: '[redacted]' },
      serializers: { err: pino.stdSerializers.err },
    },
    options.destination ?? defaultDestination(),
  ) as unknown as Logger;
}
