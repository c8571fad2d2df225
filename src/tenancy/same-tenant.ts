/** An organization and one of its environments: whose a record is. */
export type TenantOf = { organizationId: string; environment: string };

/** Whether `record` is `tenant`'s: the same organization and environment (null is nobody's). */
export const isTenants = <T extends TenantOf>(record: T | null | undefined, tenant: TenantOf): record is T =>
  record != null && record.organizationId === tenant.organizationId && record.environment === tenant.environment;
