import type Koa from 'koa';
import { isTimeZone, UTC } from '../../shared/time-zone.ts';
import type { DashboardContext } from '../context.ts';
import { COOKIES, isHtmx, isSecure, setCookie } from '../http.ts';
import { SelectField } from './form-parts.tsx';
import { type ListQuery, queryValue } from './list-controls.tsx';

/**
 * The dashboard's time zone: every page shows its times and counts its days in it. It is chosen on
 * Home or the sessions list (`?timezone=`, the API's parameter, carried on to their reports and the
 * CSV download) and kept in a cookie, so the other pages, reloads and later visits show the same
 * times; `?timezone=` in any page's address still wins for that page (a link someone shared).
 */

/** A year: the zone is a preference of this browser, not of a session. */
const KEEP_SECONDS = 365 * 24 * 3600;

/** UTC first, then every IANA zone this runtime knows, by name. */
const ZONES: readonly string[] = [UTC, ...Intl.supportedValuesOf('timeZone').filter((z) => z !== UTC && isTimeZone(z))];

/**
 * The zone a request shows times in: `?timezone=` when it names one, else the one chosen before
 * (a cookie that names no zone is ignored), else UTC.
 */
export function requestTimeZone(ctx: Koa.Context): string {
  const asked = queryValue(ctx.query, 'timezone');
  if (asked && isTimeZone(asked)) return asked;
  const kept = ctx.cookies.get(COOKIES.timeZone);
  return kept && isTimeZone(kept) ? kept : UTC;
}

/**
 * `?timezone=` as a zone: `fallback` (the dashboard's, UTC by default) when absent or empty; one that
 * is no IANA zone gets a message for its field, and the screen counts in `fallback` meanwhile (never a 5xx).
 */
export function timeZoneOf(query: ListQuery, fallback: string = UTC): { zone: string; error?: string } {
  const raw = queryValue(query, 'timezone');
  if (!raw) return { zone: fallback };
  if (isTimeZone(raw)) return { zone: raw };
  return {
    zone: fallback,
    error: `${raw.slice(0, 60)} is not a time zone: pick one from the list (an IANA name such as Europe/Paris, or UTC). Shown in ${fallback}.`,
  };
}

/**
 * The zone of a screen with the field, as `timeZoneOf` reads it; one given there becomes the
 * dashboard's (the cookie, UTC by forgetting it). A live refresh (htmx) carries the zone its page was
 * drawn in and changes nothing: another tab may have chosen since.
 */
export function chooseTimeZone(ctx: DashboardContext, publicUrl: string): { zone: string; error?: string } {
  const chosen = timeZoneOf(ctx.query, ctx.state.timeZone);
  if (!chosen.error && queryValue(ctx.query, 'timezone') && !isHtmx(ctx))
    setCookie(ctx, COOKIES.timeZone, chosen.zone === UTC ? null : chosen.zone, {
      secure: isSecure(ctx, publicUrl),
      maxAgeSeconds: KEEP_SECONDS,
    });
  return chosen;
}

/** A select of the zones, the chosen one kept (an alias such as US/Eastern offered too when it is the one given). */
export function TimeZoneField({ value, error }: { value: string; error?: string | undefined }): JSX.Element {
  const zones = ZONES.includes(value) || !isTimeZone(value) ? ZONES : [value, ...ZONES];
  return (
    <SelectField
      name="timezone"
      label="Time zone"
      hint="Every page shows its times in this zone; days start at its midnight"
      value={value}
      error={error}
      options={zones.map((zone) => ({ value: zone, label: zone.replaceAll('_', ' ') }))}
    />
  );
}
