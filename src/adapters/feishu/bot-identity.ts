/**
 * Who Butler is in this tenant. `GET /open-apis/bot/v3/info` documents only `bot.open_id` (plus `app_name`,
 * `avatar_url`, `activate_status`, `ip_white_list`; open.feishu.cn "获取机器人信息"), so `openId` is always
 * there; `userId` and `unionId` are kept when an answer carries them.
 */
export interface FeishuBotIdentity {
  openId: string;
  userId: string | undefined;
  unionId: string | undefined;
  name: string | undefined;
}

/** The three ids Feishu gives a person (or bot) in events; each may be missing or empty. */
export interface FeishuUserIds {
  openId: string | undefined;
  userId: string | undefined;
  unionId: string | undefined;
}

/**
 * Whether `ids` name the bot, on any id both sides have. A mention entry may carry only `user_id` or
 * `union_id`; it then matches only if the bot's identity has that id too (never on names or placeholders).
 */
export function isBot(bot: FeishuBotIdentity, ids: FeishuUserIds): boolean {
  return (
    (ids.openId !== undefined && ids.openId === bot.openId) ||
    (ids.userId !== undefined && ids.userId === bot.userId) ||
    (ids.unionId !== undefined && ids.unionId === bot.unionId)
  );
}

/** Whether a bare id (from a post's `at` tag, whose `user_id` holds an open_id or another id) is the bot's. */
export function isBotId(bot: FeishuBotIdentity, id: string): boolean {
  return id === bot.openId || id === bot.userId || id === bot.unionId;
}
