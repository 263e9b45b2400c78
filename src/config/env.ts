import { z } from 'zod';

/**
 * Environment variables (ARCHITECTURE.md, "Interface contract"). Empty strings count as unset:
 * `.env` files and CI often export `FOO=` for "off".
 */
const blankToUndefined = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

const optionalString = z.preprocess(blankToUndefined, z.string().optional());
const optionalUrl = z.preprocess(blankToUndefined, z.url().optional());
/** A Postgres connection string: `postgres://` or `postgresql://`, nothing that merely looks like one. */
const optionalPostgresUrl = z.preprocess(
  blankToUndefined,
  z
    .url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// connection string' })
    .optional(),
);
const flag = (fallback: boolean) => z.preprocess(blankToUndefined, z.stringbool().default(fallback));

/** A self-built app serves the tenant it was made in; a store app (`isv`), any tenant that installs it. */
export const feishuAppTypes = ['self_built', 'isv'] as const;

export const envSchema = z.object({
  PORT: z.preprocess(blankToUndefined, z.coerce.number().int().min(0).max(65_535).default(3000)),
  DATABASE_URL: optionalPostgresUrl,
  DATABASE_DIRECT_URL: optionalPostgresUrl,
  BUTLER_DATA_DIR: z.preprocess(blankToUndefined, z.string().default('./.butler')),
  BUTLER_CONFIG: optionalString,
  BUTLER_PUBLIC_URL: z.preprocess(
    blankToUndefined,
    z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://butler.example.com' })
      .optional(),
  ),

  /** 32 bytes, base64 or hex; more after commas still decrypt (rotation). Encrypts OAuth tokens at rest. */
  BUTLER_SECRET_KEY: optionalString,

  BUTLER_BASE_URL: optionalUrl,
  BUTLER_API_TOKEN: optionalString,
  BUTLER_MODEL: optionalString,

  BUTLER_CONTEXT_COMPACTION_ENABLED: flag(true),
  BUTLER_CONTEXT_COMPACTION_THRESHOLD_TOKENS: z.preprocess(
    blankToUndefined,
    z.coerce.number().int().min(500).default(4000),
  ),
  BUTLER_CONTEXT_COMPACTION_BASE_URL: optionalUrl,
  BUTLER_CONTEXT_COMPACTION_API_TOKEN: optionalString,
  BUTLER_CONTEXT_COMPACTION_MODEL: optionalString,

  SLACK_BOT_TOKEN: optionalString,
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_APP_TOKEN: optionalString,
  SLACK_CLIENT_ID: optionalString,
  SLACK_CLIENT_SECRET: optionalString,
  SLACK_STATE_SECRET: optionalString,
  SLACK_API_URL: z.preprocess(blankToUndefined, z.url().default('https://slack.com/api/')),

  FEISHU_APP_ID: optionalString,
  FEISHU_APP_SECRET: optionalString,
  FEISHU_ENCRYPT_KEY: optionalString,
  FEISHU_VERIFICATION_TOKEN: optionalString,
  FEISHU_DOMAIN: z.preprocess(blankToUndefined, z.string().default('feishu')),
  FEISHU_CONNECTION: z.preprocess(blankToUndefined, z.enum(['webhook', 'websocket']).default('webhook')),
  FEISHU_APP_TYPE: z.preprocess(blankToUndefined, z.enum(feishuAppTypes).default('self_built')),

  LANGFUSE_ENABLED: flag(false),
  LANGFUSE_PUBLIC_KEY: optionalString,
  LANGFUSE_SECRET_KEY: optionalString,
  LANGFUSE_BASE_URL: z.preprocess(blankToUndefined, z.url().default('https://cloud.langfuse.com')),

  OBSERVABILITY_SERVICE_NAME: z.preprocess(blankToUndefined, z.string().default('butler')),
  LOG_LEVEL: z.preprocess(
    blankToUndefined,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
});

export type Env = z.infer<typeof envSchema>;
