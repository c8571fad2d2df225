import type Koa from 'koa';
import type { RouterContext } from '@koa/router';
import type { Environment } from '../event-store/event-store.ts';
import type { OrganizationDoc } from '../projections/collections.ts';
import type { DashboardSessionDoc, UserDoc } from '../projections/team.projection.ts';
import type { ApiBridge } from '../read-api/api-bridge.ts';
import type { FormPart } from '../read-api/brand-logo.ts';
import type { ApiDeps } from '../read-api/api-context.ts';
import type { Csrf } from './auth/csrf.ts';
import type { DashboardSessions } from './auth/sessions.ts';
import type { SetupToken } from './auth/setup-token.ts';
import type { SignInThrottle } from './auth/throttle.ts';
import type { DashboardEvents } from './events.ts';
import type { NavItem } from './screens.ts';

/** Everything the dashboard needs: the API's own dependencies (same read models, same commands) and its auth parts. */
export type DashboardDeps = ApiDeps & {
  /** `/api/v1` in process: every change a page makes goes through the API's own route (see api-bridge.ts). */
  api: ApiBridge;
  sessions: DashboardSessions;
  csrf: Csrf;
  signInThrottle: SignInThrottle;
  setup: SetupToken;
  events: DashboardEvents;
};

/** The tenant a signed-in page reads and writes: the user's organization in the environment the switch is on. */
export type DashboardTenant = { organizationId: string; environment: Environment };

/** What every dashboard request carries once the area's middleware has run. */
export type DashboardState = Koa.DefaultState & {
  /** The client address, as counted by the throttle (IPv6 by its /64). */
  clientAddress: string;
  /** This request's CSRF token (bound to the session, or before sign-in to the form cookie). */
  csrfToken: string;
  /** A POST's form fields (empty on other requests). */
  form: URLSearchParams;
  /** A multipart POST's files (an upload form's); empty otherwise. */
  files: FormPart[];
  /** Set on every page behind sign-in. */
  user: UserDoc;
  session: DashboardSessionDoc;
  tenant: DashboardTenant;
  organization: OrganizationDoc | null;
  /** The zone this request shows times and days in: `?timezone=`, else the one chosen (cookie), else UTC. */
  timeZone: string;
  /** The nav items of the screens registered, for the layout. */
  nav: readonly NavItem[];
};

export type DashboardContext = RouterContext<DashboardState>;
