import type { SealedSecret } from './installation-records.js';

/** A Feishu tenant and the app that serves it. */
export interface FeishuTenant {
  tenantKey: string;
  appId: string;
  firstSeenAt: Date;
  uninstalledAt: Date | undefined;
}

/** What claiming a tenant for an app found. */
export type TenantClaim =
  /** The app serves the tenant (`returned`: it had been uninstalled, and is back). */
  | { served: true; returned: boolean }
  /** Another app serves it: the claim changed nothing. */
  | { served: false; by: string };

export interface FeishuTenantRepository {
  /**
   * The tenant is the app's if no app has it, or its app was uninstalled there; it is installed again if it was
   * not. One statement, so concurrent claims agree.
   */
  claim(tenantKey: string, appId: string): Promise<TenantClaim>;
  get(tenantKey: string): Promise<FeishuTenant | undefined>;
  /** Every tenant an app's events named, uninstalled ones included, first seen first. */
  list(): Promise<FeishuTenant[]>;
  /** The store app was uninstalled from the tenant; false when it was not installed (or is another app's). */
  uninstall(tenantKey: string, appId: string): Promise<boolean>;
}

/** A store app's cached credentials, sealed; `expiresAt` absent: good until replaced. */
export interface FeishuSecretRepository {
  get(
    appId: string,
    name: string,
  ): Promise<{ sealed: SealedSecret; expiresAt: Date | undefined } | undefined>;
  put(appId: string, name: string, sealed: SealedSecret, expiresAt: Date | undefined): Promise<void>;
  delete(appId: string, name: string): Promise<void>;
}
