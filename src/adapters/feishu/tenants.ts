import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { FeishuTenantRepository } from '../../core/contracts/feishu-tenants.js';
import type { Logger } from '../../core/contracts/logger.js';

const conflictLogEveryMs = 60 * 60_000;
/** How long a process trusts what it read of a tenant's app: a tenant moves only when its app was uninstalled. */
const appOfTenantForMs = 60_000;

/**
 * Which app serves which tenant, when Butler serves several Feishu apps or a store app. A tenant belongs to the
 * first app whose events name it (kept in Postgres, so every process agrees): a conversation's workspace is its
 * tenant, and every call for it goes out with that app's token. Another app's events for the same tenant are
 * acknowledged and dropped (logged once an hour), never mixed into the first app's conversations.
 */
export class FeishuTenants {
  private readonly appOfTenant = new Map<string, { appId: string; until: number }>();
  private readonly lastLogged = new Map<string, number>();

  constructor(
    private readonly options: {
      repository: FeishuTenantRepository;
      intake: Pick<ButlerIntake, 'workspaceInstalled' | 'workspaceRemoved'>;
      logger: Logger;
      now: () => number;
      /** The tenants served may have changed (one new to this process, back, or gone): /readyz counts again. */
      changed: () => void;
    },
  ) {}

  /** Whether `appId` serves `tenantKey`, claiming it if no app does; a returning tenant's tasks and approvals resume. */
  async admit(tenantKey: string | undefined, appId: string): Promise<boolean> {
    if (!tenantKey) return false;
    const claim = await this.options.repository.claim(tenantKey, appId);
    if (!claim.served) {
      this.noteConflict(tenantKey, appId, claim.by);
      return false;
    }
    if (!this.appOfTenant.has(tenantKey) || claim.returned) this.options.changed();
    this.remember(tenantKey, appId);
    if (claim.returned) {
      this.options.logger.info({ tenantKey, appId }, 'Feishu app installed again in a tenant');
      await this.options.intake.workspaceInstalled('feishu', tenantKey);
    }
    return true;
  }

  /** How many tenants are served now (uninstalled ones are not), for /readyz. */
  async served(): Promise<number> {
    const tenants = await this.options.repository.list();
    return tenants.filter((tenant) => !tenant.uninstalledAt).length;
  }

  /** The app serving `tenantKey`, or undefined when no app's events have named it. */
  async appOf(tenantKey: string): Promise<string | undefined> {
    const known = this.appOfTenant.get(tenantKey);
    if (known && known.until > this.options.now()) return known.appId;
    const tenant = await this.options.repository.get(tenantKey);
    if (tenant) this.remember(tenantKey, tenant.appId);
    return tenant?.appId;
  }

  private remember(tenantKey: string, appId: string): void {
    this.appOfTenant.set(tenantKey, { appId, until: this.options.now() + appOfTenantForMs });
  }

  /** A store app was removed from a tenant: its scheduled tasks and pending approvals pause until it is back. */
  async uninstalled(tenantKey: string, appId: string): Promise<void> {
    this.appOfTenant.delete(tenantKey);
    if (!(await this.options.repository.uninstall(tenantKey, appId))) return;
    this.options.changed();
    this.options.logger.info({ tenantKey, appId }, 'Feishu app uninstalled from a tenant');
    await this.options.intake.workspaceRemoved('feishu', tenantKey);
  }

  private noteConflict(tenantKey: string, appId: string, servedBy: string): void {
    const now = this.options.now();
    const key = `${tenantKey}:${appId}`;
    const last = this.lastLogged.get(key);
    if (last !== undefined && now - last < conflictLogEveryMs) return;
    this.lastLogged.set(key, now);
    this.options.logger.warn(
      { tenantKey, appId, servedBy },
      'Feishu event for a tenant another app serves: acknowledged and ignored (one app per tenant; logged once an hour)',
    );
  }
}
