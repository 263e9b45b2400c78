import type * as lark from '@larksuiteoapi/node-sdk';
import type { FeishuConfig } from '../../config/index.js';
import type { LaneSpec, Pacer, RunOptions } from '../pacing/index.js';
import type { JsonRecord } from './fields.js';

type Request = () => Promise<unknown>;
type Paced = { lanes: readonly LaneSpec[]; request: Request };

/** What one tenant's calls are made with (`tenant-calls.ts`, `search-calls.ts`). */
export interface TenantCallsContext {
  config: FeishuConfig;
  client: lark.Client;
  /** The same, logging nothing: for lookups whose failures the caller handles. */
  quietClient: () => lark.Client;
  pacer: Pacer;
  /** Runs a call through the pacing layer and checks its answer (`code === 0`). */
  call: <T>(
    operation: string,
    request: Request | Paced,
    read: (body: JsonRecord) => T,
    runOptions?: RunOptions,
  ) => Promise<T>;
  paced: (lanes: readonly LaneSpec[], request: Request) => Paced;
  /** A store app's tenant; undefined for a self-built app. */
  tenantKey: string | undefined;
}
