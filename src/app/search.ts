import type { AppConfig } from '../config/index.js';
import type { ConnectionBook } from '../core/connections/index.js';
import type { Platform } from '../core/contracts/events.js';
import type { People } from '../core/contracts/people.js';
import { createSearchTool } from '../core/search/index.js';
import type { Tool } from '../core/tools/tool.js';

/** `search_messages`, offered on the platforms where it can work (`config/search.ts`); none: no tool. */
export function searchTools(
  config: AppConfig,
  people: People,
  connections: ConnectionBook | undefined,
): Tool[] {
  const { search } = config;
  const feishu = search.feishu && connections ? connections : undefined;
  const platforms: Platform[] = [
    ...(search.slack ? (['slack'] as const) : []),
    ...(feishu ? (['feishu'] as const) : []),
  ];
  if (platforms.length === 0) return [];
  return [
    createSearchTool({
      people,
      perMinute: search.perMinute,
      platforms,
      slackPrivate: search.slackPrivate,
      ...(feishu ? { connections: feishu } : {}),
    }),
  ];
}
