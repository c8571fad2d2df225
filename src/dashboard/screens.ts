import type { Permission } from './auth/roles.ts';

/**
 * Every screen of the dashboard the issue lists, in nav order, with its path. A screen is shown in
 * the nav only once a page module registers it (see pages/registry.ts); `testOnly` ones only in
 * test mode; and only to a role that has the `permission` its page asks (read unless said), so no
 * one is led to a 403. The page still checks it.
 */
export const SCREENS = {
  home: { label: 'Home', path: '/dashboard', icon: 'home' },
  checkoutSessions: { label: 'Checkout sessions', path: '/dashboard/checkout-sessions', icon: 'cart' },
  invoices: { label: 'Invoices', path: '/dashboard/invoices', icon: 'invoice' },
  subscriptions: { label: 'Subscriptions', path: '/dashboard/subscriptions', icon: 'repeat' },
  paymentLinks: { label: 'Payment links', path: '/dashboard/payment-links', icon: 'link' },
  products: { label: 'Products', path: '/dashboard/products', icon: 'box' },
  customers: { label: 'Customers', path: '/dashboard/customers', icon: 'people' },
  promoCodes: { label: 'Promo codes', path: '/dashboard/promo-codes', icon: 'tag' },
  developers: { label: 'Developers', path: '/dashboard/developers', icon: 'code', permission: 'developers' },
  settings: { label: 'Settings', path: '/dashboard/settings', icon: 'gear' },
  recovery: { label: 'Recovery', path: '/dashboard/recovery', icon: 'lifebuoy', permission: 'manage' },
  faucet: { label: 'Faucet', path: '/dashboard/faucet', icon: 'drop', testOnly: true, permission: 'developers' },
  auditTrail: { label: 'Audit trail', path: '/dashboard/audit-trail', icon: 'list' },
} as const satisfies Record<string, ScreenEntry>;

type ScreenEntry = { label: string; path: string; icon: string; testOnly?: boolean; permission?: Permission };

export type ScreenId = keyof typeof SCREENS;

export type NavItem = {
  screen: ScreenId;
  label: string;
  path: string;
  icon: string;
  testOnly: boolean;
  permission: Permission;
};

/** The nav of the screens registered, in the table's order. */
export function navOf(screens: Iterable<ScreenId>): NavItem[] {
  const registered = new Set(screens);
  return (Object.keys(SCREENS) as ScreenId[])
    .filter((id) => registered.has(id))
    .map((id) => {
      const screen: ScreenEntry = SCREENS[id];
      return {
        screen: id,
        label: screen.label,
        path: screen.path,
        icon: screen.icon,
        testOnly: screen.testOnly === true,
        permission: screen.permission ?? 'read',
      };
    });
}
