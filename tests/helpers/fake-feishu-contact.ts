/**
 * The fake Feishu Open API's contact endpoint, `GET /open-apis/contact/v3/users/:user_id` (open.feishu.cn
 * contact-v3/user/get), open_ids only. Kept apart from `fake-feishu-api.ts` so that file stays readable.
 */

type Json = Record<string, unknown>;

/** A person the contact API knows; `name` undefined answers like an app without contact:user.base:readonly. */
export interface FakeContactUser {
  name: string | undefined;
  enName?: string;
  /** `time_zone` of the answer, e.g. `Asia/Shanghai` (contact-v3/user/get). */
  timeZone?: string;
}

/** Feishu's answer when the app lacks the API scope (HTTP 400, code 99991672, "Access denied. One of …"). */
export const scopeMissingCode = 99991672;
/** The fake's answer for an open_id it does not know (a person outside the app's contact range). */
export const userOutOfRangeCode = 41050;

const contactScopes =
  'contact:contact.base:readonly, contact:contact:access_as_app, contact:contact:readonly, contact:contact:readonly_as_app';

export function answerContactUser(
  state: { contactScopeMissing: boolean; contactUsers: ReadonlyMap<string, FakeContactUser> },
  openId: string,
  query: Record<string, string>,
): { status: number; body: Json } {
  const error = (code: number, msg: string) => ({ status: 400, body: { code, msg } });
  if (state.contactScopeMissing) {
    return error(
      scopeMissingCode,
      `Access denied. One of the following scopes is required: [${contactScopes}].`,
    );
  }
  if (query.user_id_type !== 'open_id') return error(99992402, 'field validation failed');
  const user = state.contactUsers.get(openId);
  if (!user) return error(userOutOfRangeCode, 'no user authority error');
  const answer = {
    open_id: openId,
    union_id: `on_${openId.slice(3)}`,
    ...(user.name === undefined ? {} : { name: user.name, en_name: user.enName ?? user.name }),
    ...(user.timeZone ? { time_zone: user.timeZone } : {}),
    avatar: { avatar_72: 'https://example.com/avatar.png' },
    status: { is_activated: true, is_frozen: false, is_resigned: false, is_exited: false },
  };
  return { status: 200, body: { code: 0, msg: 'success', data: { user: answer } } };
}
