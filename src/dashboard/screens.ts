/**
 * Every screen of the dashboard the issue lists, in nav order, with its path. A screen is shown in
 * the nav only once a page module registers it (see pages/registry.ts); `testOnly` ones only in
 * test mode.
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
  developers: { label: 'Developers', path: '/dashboard/developers', icon: 'code' },
  settings: { label: 'Settings', path: '/dashboard/settings', icon: 'gear' },
  recovery: { label: 'Recovery', path: '/dashboard/recovery', icon: 'lifebuoy' },
  faucet: { label: 'Faucet', path: '/dashboard/faucet', icon: 'drop', testOnly: true },
  auditTrail: { label: 'Audit trail', path: '/dashboard/audit-trail', icon: 'list' },
} as const satisfies Record<string, { label: string; path: string; icon: string; testOnly?: boolean }>;

export type ScreenId = keyof typeof SCREENS;

export type NavItem = { screen: ScreenId; label: string; path: string; icon: string; testOnly: boolean };

/** The nav of the screens registered, in the table's order. */
export function navOf(screens: Iterable<ScreenId>): NavItem[] {
  const registered = new Set(screens);
  return (Object.keys(SCREENS) as ScreenId[])
    .filter((id) => registered.has(id))
    .map((id) => {
      const screen: { label: string; path: string; icon: string; testOnly?: boolean } = SCREENS[id];
      return {
        screen: id,
        label: screen.label,
        path: screen.path,
        icon: screen.icon,
        testOnly: screen.testOnly === true,
      };
    });
}
