import type { RecordedCall } from './fake-feishu-api.js';

/**
 * The fake Feishu Open API's token endpoints for apps beside its default one (open.feishu.cn authentication
 * docs): a self-built app's `tenant_access_token/internal`, and a store app's `app_ticket/resend`,
 * `app_access_token` (app id, secret and the ticket Feishu pushed) and `tenant_access_token` (app token and
 * tenant key). Each token it issues names its app and tenant, so a test can tell which a call carried.
 */

type Json = Record<string, unknown>;
type Answer = { status: number; body: Json };

export interface FakeApp {
  appId: string;
  appSecret: string;
  type: 'self_built' | 'isv';
}

export class FakeFeishuAuth {
  private readonly apps = new Map<string, FakeApp>();
  /** Issued tenant tokens → whose they are. */
  readonly tenantTokens = new Map<string, { appId: string; tenantKey: string | undefined }>();
  private readonly appTokens = new Map<string, string>();
  /** The ticket each store app has now: what Feishu pushes in `app_ticket` events. */
  readonly tickets = new Map<string, string>();
  /** How many times each store app asked for its ticket again. */
  readonly resends = new Map<string, number>();
  private counter = 0;

  add(app: FakeApp): void {
    this.apps.set(app.appId, app);
    if (app.type === 'isv') this.tickets.set(app.appId, `ticket-${app.appId}-1`);
  }

  /** The app and tenant a call's `Authorization` names, or undefined for the fake's default token. */
  ownerOf(call: RecordedCall): { appId: string; tenantKey: string | undefined } | undefined {
    return this.tenantTokens.get(call.authorization?.replace(/^Bearer /, '') ?? '');
  }

  route(call: RecordedCall): Answer | undefined {
    const body = call.body ?? {};
    const app = this.apps.get(String(body.app_id));
    const secretOk = app !== undefined && body.app_secret === app.appSecret;
    const denied = { status: 200, body: { code: 10014, msg: 'app secret invalid' } };
    switch (call.path) {
      case '/open-apis/auth/v3/tenant_access_token/internal':
        if (!app) return undefined;
        if (!secretOk || app.type !== 'self_built') return denied;
        return this.tenantToken(app.appId, undefined);
      case '/open-apis/auth/v3/app_ticket/resend':
        if (!secretOk) return denied;
        this.resends.set(app.appId, (this.resends.get(app.appId) ?? 0) + 1);
        return { status: 200, body: { code: 0, msg: 'ok' } };
      case '/open-apis/auth/v3/app_access_token': {
        if (!secretOk) return denied;
        if (body.app_ticket !== this.tickets.get(app.appId))
          return { status: 200, body: { code: 10012, msg: 'app_ticket is invalid' } };
        const token = this.next(`a-${app.appId}-`);
        this.appTokens.set(token, app.appId);
        return { status: 200, body: { code: 0, msg: 'ok', app_access_token: token, expire: 7200 } };
      }
      case '/open-apis/auth/v3/tenant_access_token': {
        const appId = this.appTokens.get(String(body.app_access_token));
        if (!appId) return { status: 200, body: { code: 10003, msg: 'app_access_token invalid' } };
        return this.tenantToken(appId, String(body.tenant_key));
      }
      default:
        return undefined;
    }
  }

  private tenantToken(appId: string, tenantKey: string | undefined): Answer {
    const token = this.next(`t-${appId}-${tenantKey ?? 'own'}-`);
    this.tenantTokens.set(token, { appId, tenantKey });
    return { status: 200, body: { code: 0, msg: 'ok', tenant_access_token: token, expire: 7200 } };
  }

  private next(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter}`;
  }
}
