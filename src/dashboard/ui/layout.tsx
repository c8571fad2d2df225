import type { Children, PropsWithChildren } from '@kitajs/html';
import { iconUrl } from '../../hosted/assets.ts';
import { dashboardAssetUrl } from '../assets.ts';
import { can } from '../auth/roles.ts';
import type { DashboardContext } from '../context.ts';
import type { ScreenId } from '../screens.ts';
import { Badge, CsrfField } from './components.tsx';
import { Icon } from './icons.tsx';

/** htmx settings: no inline style it would inject (the CSP refuses it), no eval, requests to Weir only. */
const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
});

function Head({ title }: { title: string }): JSX.Element {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="htmx-config" content={HTMX_CONFIG} />
      <meta name="referrer" content="same-origin" />
      <title safe>{`${title} · Weir`}</title>
      <link rel="icon" href={iconUrl('favicon')} type="image/svg+xml" />
      <link rel="stylesheet" href={dashboardAssetUrl('dashboard.css')} />
      <script src={dashboardAssetUrl('htmx.min.js')} defer></script>
      <script src={dashboardAssetUrl('dashboard.js')} defer></script>
    </head>
  );
}

const Wordmark = (): JSX.Element => (
  <span class="wordmark">
    <img src={iconUrl('favicon')} alt="" width="24" height="24" />
    Weir
  </span>
);

/** Sign-in, first-run and other pages shown before sign-in: one centred card. */
export function AuthLayout({ title, children }: PropsWithChildren<{ title: string }>): JSX.Element {
  return (
    <>
      {'<!doctype html>'}
      <html lang="en">
        <Head title={title} />
        <body class="auth">
          <main class="auth-main">
            <Wordmark />
            <div class="card auth-card">{children}</div>
          </main>
        </body>
      </html>
    </>
  );
}

/** The test/live switch: a form of two buttons, so it works without JavaScript; it comes back to `location` (a record's page: its list). */
function EnvironmentSwitch({ ctx, location }: { ctx: DashboardContext; location: string }): JSX.Element {
  const current = ctx.state.tenant.environment;
  return (
    <form method="post" action="/dashboard/environment" class="env-switch" aria-label="Environment">
      <CsrfField token={ctx.state.csrfToken} />
      <input type="hidden" name="return" value={location} />
      <button type="submit" name="environment" value="test" aria-pressed={String(current === 'test')}>
        Test
      </button>
      <button type="submit" name="environment" value="live" aria-pressed={String(current === 'live')}>
        Live
      </button>
    </form>
  );
}

/**
 * The frame of every signed-in screen: the nav of the registered screens the user's role may open, the organization, the
 * test/live switch, the user and sign-out, and in test mode a band that says so. `screen` marks the
 * current nav item; the body carries the CSRF header htmx sends and the live-updates address.
 * `location`: the page's own address when it answers a form post (a secret shown once there):
 * dashboard.js puts it in the address bar, so a reload reads the page instead of posting again.
 */
export function AppLayout({
  ctx,
  title,
  screen,
  actions,
  location,
  children,
}: PropsWithChildren<{
  ctx: DashboardContext;
  title: string;
  screen?: ScreenId;
  actions?: Children;
  location?: string;
}>): JSX.Element {
  const { user, tenant, organization, nav } = ctx.state;
  const test = tenant.environment === 'test';
  // A screen the role cannot open is left out (its page would answer 403 all the same).
  const items = nav.filter((item) => (test || !item.testOnly) && can(user.role, item.permission));
  return (
    <>
      {'<!doctype html>'}
      <html lang="en">
        <Head title={title} />
        <body
          class={['app', test ? 'test-mode' : 'live-mode']}
          hx-headers={JSON.stringify({ 'X-CSRF-Token': ctx.state.csrfToken })}
          data-events="/dashboard/events"
          data-location={location}
        >
          <a class="skip-link" href="#content">
            Skip to content
          </a>
          {test ? (
            <div class="test-band" role="region" aria-label="Test mode">
              <strong>Test mode</strong> <span>You are looking at test data: testnets and test keys only.</span>
            </div>
          ) : (
            ''
          )}
          <div class="shell">
            <aside class="sidebar">
              <div class="sidebar-top">
                <Wordmark />
                <span class="org-name" title="Organization" safe>
                  {organization?.name ?? 'Organization'}
                </span>
              </div>
              <nav aria-label="Dashboard">
                <ul>
                  {items.map((item) => (
                    <li>
                      <a href={item.path} aria-current={item.screen === screen ? 'page' : undefined}>
                        <Icon name={item.icon} />
                        <span safe>{item.label}</span>
                      </a>
                    </li>
                  ))}
                </ul>
              </nav>
            </aside>
            <div class="main-column">
              <header class="topbar">
                <EnvironmentSwitch ctx={ctx} location={location ?? ctx.originalUrl} />
                <div class="user-menu">
                  <span class="user-email" safe>
                    {user.email}
                  </span>
                  <span class="user-role">{user.role}</span>
                  <form method="post" action="/dashboard/logout">
                    <CsrfField token={ctx.state.csrfToken} />
                    <button type="submit" class="button-quiet">
                      <Icon name="signOut" size={16} />
                      Sign out
                    </button>
                  </form>
                </div>
              </header>
              <main id="content" tabindex="-1">
                <div class="page-header">
                  <h1 safe>{title}</h1>
                  {test ? <Badge tone="warning" label="Test mode" /> : ''}
                  <div class="page-actions">{actions}</div>
                </div>
                {children}
              </main>
            </div>
          </div>
        </body>
      </html>
    </>
  );
}

/** A list page's "New …" button (AppLayout's `actions`), shown to those who may create. */
export const NewButton = ({ ctx, href, label }: { ctx: DashboardContext; href: string; label: string }): JSX.Element =>
  can(ctx.state.user.role, 'manage') ? (
    <a class="button-primary" href={href} safe>
      {label}
    </a>
  ) : (
    ''
  );
