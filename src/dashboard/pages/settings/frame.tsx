import type { Children, PropsWithChildren } from '@kitajs/html';
import { can } from '../../auth/roles.ts';
import { SECURITY_PATH } from '../../auth/two-factor.ts';
import type { DashboardContext } from '../../context.ts';
import { Alert, CsrfField } from '../../ui/components.tsx';
import type { FormErrors } from '../../ui/form-parts.tsx';
import { AppLayout } from '../../ui/layout.tsx';
import { TEAM_PATH } from '../team/members.tsx';

export const SETTINGS = '/dashboard/settings';

/** The parts of Settings, in the order of its tabs; Team and Security are pages of their own (pages/team). */
export const SECTIONS = {
  overview: { label: 'Overview', path: SETTINGS },
  paymentMethods: { label: 'Payment methods', path: `${SETTINGS}/payment-methods` },
  payments: { label: 'Checkout defaults', path: `${SETTINGS}/payments` },
  business: { label: 'Business details', path: `${SETTINGS}/business` },
  branding: { label: 'Branding', path: `${SETTINGS}/branding` },
  cards: { label: 'Card payments', path: `${SETTINGS}/card-processor` },
  invoices: { label: 'Invoices', path: `${SETTINGS}/invoices` },
  team: { label: 'Team', path: TEAM_PATH },
  security: { label: 'Security', path: SECURITY_PATH },
} as const;

export type SectionId = keyof typeof SECTIONS;

/** Whether the signed-in user may change settings (admins and owners); the others read them. */
export const canChange = (ctx: DashboardContext): boolean => can(ctx.state.user.role, 'manage');

/**
 * A page of Settings: the tabs of its parts (links, so they work without JavaScript), a line for
 * those who may only read, and the part itself. Every part is per environment, as the API is.
 */
export function SettingsLayout(
  props: PropsWithChildren<{ ctx: DashboardContext; section: SectionId; title?: string; actions?: Children }>,
): JSX.Element {
  const { ctx, section } = props;
  return (
    <AppLayout ctx={ctx} title={props.title ?? SECTIONS[section].label} screen="settings" actions={props.actions}>
      <nav class="status-filter settings-tabs" aria-label="Settings">
        <ul>
          {(Object.keys(SECTIONS) as SectionId[]).map((id) => (
            <li>
              <a href={SECTIONS[id].path} aria-current={id === section ? 'page' : undefined}>
                {SECTIONS[id].label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {canChange(ctx) ? (
        ''
      ) : (
        <Alert tone="info">
          <span
            safe
          >{`You are a ${ctx.state.user.role}: you can read these settings; only an admin or owner can change them.`}</span>
        </Alert>
      )}
      {props.children}
    </AppLayout>
  );
}

/**
 * A settings form: its CSRF field, the refusal not tied to an input above it, and its inputs in a
 * fieldset that is disabled for a user who may only read (the routes refuse them anyway).
 */
export function SettingsForm(
  props: PropsWithChildren<{ ctx: DashboardContext; action: string; id: string; errors: FormErrors; upload?: boolean }>,
): JSX.Element {
  const { ctx, errors } = props;
  return (
    <form
      method="post"
      action={props.action}
      id={props.id}
      enctype={props.upload ? 'multipart/form-data' : undefined}
      novalidate
    >
      <CsrfField token={ctx.state.csrfToken} />
      {errors.form ? (
        <Alert tone="danger">
          <span safe>{errors.form}</span>
        </Alert>
      ) : (
        ''
      )}
      <fieldset class="bare" disabled={!canChange(ctx)}>
        {props.children}
      </fieldset>
    </form>
  );
}
