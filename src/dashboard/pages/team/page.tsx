import { definePage } from '../../page.ts';
import { teamRoutes } from './members.tsx';
import { securityRoutes } from './security.tsx';

/**
 * Team and security settings, without a nav item of their own (the Settings screen links to them):
 * `/dashboard/settings/team` and `/dashboard/settings/security`.
 */
export const page = definePage({
  routes(routes, deps) {
    teamRoutes(routes, deps);
    securityRoutes(routes, deps);
  },
});
