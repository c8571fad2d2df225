import type Koa from 'koa';
import type { Environment } from '../event-store/event-store.ts';
import { UnsupportedMediaTypeError } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { type FormPart, MAX_LOGO_BYTES, parseMultipart } from '../read-api/brand-logo.ts';
import { MAX_PUBLIC_BODY_BYTES, readRequestBody } from '../read-api/request-body.ts';

/** The dashboard's cookies, all scoped to /dashboard, httpOnly and SameSite=Strict. */
export const COOKIES = {
  /** `<session id>.<secret>` of the signed-in session. */
  session: 'weir_session',
  /** `test` or `live`: the environment switch. */
  environment: 'weir_env',
  /** A random value that binds the CSRF token of the forms shown before sign-in (login, setup). */
  form: 'weir_form',
  /** The IANA zone the user chose on Home or the sessions list: every page's times are shown in it. */
  timeZone: 'weir_tz',
} as const;

/** Secure when the request came over https (as a trusted proxy says) or Weir's public URL is https. */
export const isSecure = (ctx: Koa.Context, publicUrl: string): boolean => ctx.secure || publicUrl.startsWith('https:');

/** Set (or with `value` null, clear) one of the dashboard's cookies; a session cookie unless `maxAgeSeconds`. */
export function setCookie(
  ctx: Koa.Context,
  name: string,
  value: string | null,
  options: { secure: boolean; maxAgeSeconds?: number },
): void {
  const parts = [`${name}=${value ?? ''}`, 'Path=/dashboard', 'HttpOnly', 'SameSite=Strict'];
  if (options.secure) parts.push('Secure');
  if (value === null) parts.push('Max-Age=0');
  else if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  ctx.append('Set-Cookie', parts.join('; '));
}

/** The environment the switch is on: test until the user picks live. */
export const environmentOf = (ctx: Koa.Context): Environment =>
  ctx.cookies.get(COOKIES.environment) === 'live' ? 'live' : 'test';

/** Whether htmx sent the request (it wants a fragment, not a page). */
export const isHtmx = (ctx: Koa.Context): boolean => ctx.get('hx-request') === 'true';

/** A page's HTML, never cached (it shows a tenant's data). */
export async function sendHtml(
  ctx: Koa.Context,
  html: JSX.Element | Promise<JSX.Element>,
  status = 200,
): Promise<void> {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = await html;
}

/** After a POST: see the result at `location` (303, so a reload does not post again). */
export function redirectTo(ctx: Koa.Context, location: string): void {
  if (isHtmx(ctx)) {
    ctx.set('HX-Redirect', location);
    ctx.status = 204;
    return;
  }
  ctx.status = 303;
  ctx.redirect(location);
}

/** A place inside the dashboard to go back to, or the home page: never another site. */
export const safeReturnPath = (path: string | null | undefined): string =>
  path && /^\/dashboard(?:[/?#]|$)/.test(path) && !path.includes('//') && !path.includes('\\') ? path : '/dashboard';

/**
 * Where the test/live switch returns: the same page, but a record's (an id in its path, with any
 * action after it) goes to its section's list, the record being of the other environment. The
 * developers screen lists its keys and webhooks itself.
 */
export function environmentReturnPath(path: string | null | undefined): string {
  const safe = safeReturnPath(path);
  const segments = safe.split(/[?#]/, 1)[0]!.split('/');
  const at = segments.findIndex(isUuid);
  if (at === -1) return safe;
  return segments
    .slice(0, at)
    .join('/')
    .replace(/^\/dashboard\/developers\/.*/, '/dashboard/developers');
}

/** An upload form's largest body: a brand logo and a few fields. */
const MAX_UPLOAD_BODY_BYTES = MAX_LOGO_BYTES + 16 * 1024;

/**
 * A POST's form: urlencoded (at most 64 KiB), or multipart/form-data (an upload form, at most a
 * logo and its fields) whose text fields join `form` and whose files are kept aside; any other
 * body is a 415.
 */
export async function readForm(ctx: Koa.Context): Promise<{ form: URLSearchParams; files: FormPart[] }> {
  const multipart = Boolean(ctx.is('multipart/form-data'));
  const bytes = await readRequestBody(ctx, multipart ? MAX_UPLOAD_BODY_BYTES : MAX_PUBLIC_BODY_BYTES, 'the form');
  if (bytes.length === 0) return { form: new URLSearchParams(), files: [] };
  if (multipart) {
    const parts = parseMultipart(bytes, ctx.get('content-type'));
    const form = new URLSearchParams();
    for (const part of parts) if (part.filename === null) form.append(part.name, part.data.toString('utf8'));
    return { form, files: parts.filter((part) => part.filename !== null) };
  }
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw new UnsupportedMediaTypeError(
      'the dashboard takes forms as application/x-www-form-urlencoded or multipart/form-data',
      'invalid_content_type',
    );
  return { form: new URLSearchParams(bytes.toString('utf8')), files: [] };
}
