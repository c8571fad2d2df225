import { renderCheckoutPreview } from '../../../hosted/checkout-preview.ts';
import { HOSTED_PAGE_HEADERS } from '../../../hosted/headers.ts';
import { RawBody } from '../../../read-api/api-bridge.ts';
import { encodeMultipart, MAX_LOGO_BYTES } from '../../../read-api/brand-logo.ts';
import { apiFor } from '../../api.ts';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { isHtmx, redirectTo, sendHtml } from '../../http.ts';
import type { PageRoutes } from '../../page.ts';
import { Card, CsrfField, Field } from '../../ui/components.tsx';
import { type FormErrors, formErrorsOf } from '../../ui/form-parts.tsx';
import { DoneAlert } from '../developers/forms.tsx';
import { canChange, SECTIONS, SettingsForm, SettingsLayout } from './frame.tsx';

const BASE = SECTIONS.branding.path;
/** The hosted pages' own colour, which a page without a brand colour shows. */
const DEFAULT_COLOR = '#2f5d62';
const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/**
 * The preview's headers: the hosted pages' own, but framed by the dashboard (and nothing else)
 * and with no script at all, so the sample page follows no session.
 */
const PREVIEW_HEADERS = {
  ...HOSTED_PAGE_HEADERS,
  'Content-Security-Policy': HOSTED_PAGE_HEADERS['Content-Security-Policy']
    .replace("script-src 'self'", "script-src 'none'")
    .replace("frame-ancestors 'none'", "frame-ancestors 'self'"),
  'X-Frame-Options': 'SAMEORIGIN',
};

/** `#abc` as `#aabbcc`: a colour input takes only the long form (it would show anything else as black). */
const longHex = (color: string): string =>
  color.length === 4 ? `#${[...color.slice(1)].map((c) => c + c).join('')}`.toLowerCase() : color.toLowerCase();

/** A colour from the query (the one being picked), if it is one; else null. */
const queryColor = (ctx: DashboardContext): string | null => {
  const value = ctx.query.brandColor;
  return typeof value === 'string' && HEX_COLOR.test(value) ? value : null;
};

/**
 * The hosted checkout page in a frame, in `color`: redrawn (by htmx) as the colour input changes,
 * before anything is saved. The sample page runs no script (see PREVIEW_HEADERS).
 */
function BrandPreview({ color }: { color: string }): JSX.Element {
  return (
    <div
      id="brand-preview"
      class="brand-preview"
      hx-get={`${BASE}/preview-frame`}
      hx-trigger="input changed from:#field-brandColor delay:250ms"
      hx-include="#field-brandColor"
      hx-swap="outerHTML"
      hx-sync="this:replace"
    >
      <iframe
        src={`${BASE}/preview?brandColor=${encodeURIComponent(color)}`}
        title="Preview of your checkout page"
      ></iframe>
    </div>
  );
}

function BrandingPage(props: { ctx: DashboardContext; color: string; errors: FormErrors }): JSX.Element {
  const { ctx, color, errors: e } = props;
  const logo = ctx.state.organization?.brandLogo ?? null;
  return (
    <SettingsLayout ctx={ctx} section="branding">
      <p class="lede">Your logo and colour on the hosted checkout page, payment links, invoices and receipts.</p>
      <DoneAlert ctx={ctx} messages={{ saved: 'Branding saved.', 'logo-removed': 'Logo removed.' }} />
      <div class="grid grid-2 settings-grid">
        <Card title="Logo and colour" id="brand-settings">
          {logo ? (
            <p class="current-logo">
              <img src={logo} alt="Your logo" class="brand-logo" />
            </p>
          ) : (
            <p class="muted">No logo yet: pages show your business name alone.</p>
          )}
          <SettingsForm ctx={ctx} action={BASE} id="branding-form" errors={e} upload>
            <Field
              name="brandLogo"
              label={logo ? 'Replace the logo' : 'Logo'}
              type="file"
              accept="image/png,image/jpeg,image/webp,image/gif"
              error={e.brandLogo}
              hint={`A PNG, JPEG, WebP or GIF image of at most ${MAX_LOGO_BYTES / 1024} KiB.`}
            />
            <Field
              name="brandColor"
              label="Brand colour"
              type="color"
              value={color}
              error={e.brandColor}
              hint="The page header and buttons take it; the preview follows as you pick."
            />
            <button type="submit" class="button-primary">
              Save branding
            </button>
          </SettingsForm>
          {logo && canChange(ctx) ? (
            <form method="post" action={`${BASE}/logo/remove`} class="form-section">
              <CsrfField token={ctx.state.csrfToken} />
              <button type="submit" class="button-secondary">
                Remove logo
              </button>
            </form>
          ) : (
            ''
          )}
        </Card>
        <Card title="Preview" id="brand-preview-card">
          <BrandPreview color={color} />
          <p class="muted">The checkout page with a sample item, as payers see it.</p>
        </Card>
      </div>
    </SettingsLayout>
  );
}

/**
 * Branding through `PUT /api/v1/organization/brand`: the colour, and a logo uploaded as the API's
 * multipart form (sent on as is), with a live preview of the hosted checkout page beside it.
 */
export function brandingRoutes(routes: PageRoutes, deps: DashboardDeps): void {
  const render = (ctx: DashboardContext, color: string, errors: FormErrors, status = 200) => {
    // The preview is a frame of this dashboard: allowed on this page only.
    ctx.set('Content-Security-Policy', `${ctx.response.get('Content-Security-Policy')}; frame-src 'self'`);
    return sendHtml(ctx, <BrandingPage ctx={ctx} color={color} errors={errors} />, status);
  };
  const savedColor = (ctx: DashboardContext) => longHex(ctx.state.organization?.brandColor ?? DEFAULT_COLOR);

  routes.get(BASE, 'read', (ctx) => render(ctx, savedColor(ctx), {}));

  routes.post(BASE, 'manage', async (ctx) => {
    const color = (ctx.state.form.get('brandColor') ?? '').trim();
    // A file input left empty still sends its part, with no file name and no bytes.
    const logo = ctx.state.files.find((f) => f.name === 'brandLogo' && (f.filename !== '' || f.data.length > 0));
    let body: unknown = { brandColor: color };
    if (logo) {
      const form = encodeMultipart([{ name: 'brandColor', filename: null, data: Buffer.from(color) }, logo]);
      body = new RawBody(form.contentType, form.bytes);
    }
    const answer = await apiFor(ctx, deps)('PUT', '/api/v1/organization/brand', body);
    if (answer.status >= 400) {
      const errors = formErrorsOf(answer, (field) =>
        field === 'brandColor' || field === 'brandLogo' ? field : undefined,
      );
      return render(ctx, HEX_COLOR.test(color) ? longHex(color) : savedColor(ctx), errors, answer.status);
    }
    redirectTo(ctx, `${BASE}?done=saved`);
  });

  routes.post(`${BASE}/logo/remove`, 'manage', async (ctx) => {
    await apiFor(ctx, deps)('DELETE', '/api/v1/organization/brand-logo');
    redirectTo(ctx, `${BASE}?done=logo-removed`);
  });

  routes.get(`${BASE}/preview-frame`, 'read', async (ctx) => {
    if (!isHtmx(ctx)) return ctx.redirect(BASE);
    await sendHtml(ctx, <BrandPreview color={longHex(queryColor(ctx) ?? savedColor(ctx))} />);
  });

  routes.get(`${BASE}/preview`, 'read', (ctx) => {
    const org = ctx.state.organization;
    ctx.set(PREVIEW_HEADERS);
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderCheckoutPreview({
      org,
      brand: { brandColor: queryColor(ctx) ?? org?.brandColor ?? null, brandLogo: org?.brandLogo ?? null },
      environment: ctx.state.tenant.environment,
      networks: deps.rail.networks(ctx.state.tenant.environment),
      now: deps.clock.now(),
    });
  });
}
