import { isTimeZone, UTC } from '../../shared/time-zone.ts';
import { SelectField } from './form-parts.tsx';
import { type ListQuery, queryValue } from './list-controls.tsx';

/**
 * The time zone a report screen counts days in and shows times in, carried as `?timezone=` (the API's
 * parameter) to its reports and its CSV download, so an analyst closes days at their business's midnight.
 */

/** UTC first, then every IANA zone this runtime knows, by name. */
const ZONES: readonly string[] = [UTC, ...Intl.supportedValuesOf('timeZone').filter((z) => z !== UTC && isTimeZone(z))];

/**
 * `?timezone=` as a zone: UTC when absent or empty; one that is no IANA zone gets a message for its
 * field, and the screen counts in UTC meanwhile (never a 5xx).
 */
export function timeZoneOf(query: ListQuery): { zone: string; error?: string } {
  const raw = queryValue(query, 'timezone');
  if (!raw) return { zone: UTC };
  if (isTimeZone(raw)) return { zone: raw };
  return {
    zone: UTC,
    error: `${raw.slice(0, 60)} is not a time zone: pick one from the list (an IANA name such as Europe/Paris, or UTC). Shown in UTC.`,
  };
}

/** A select of the zones, the chosen one kept (an alias such as US/Eastern offered too when it is the one given). */
export function TimeZoneField({ value, error }: { value: string; error?: string | undefined }): JSX.Element {
  const zones = ZONES.includes(value) || !isTimeZone(value) ? ZONES : [value, ...ZONES];
  return (
    <SelectField
      name="timezone"
      label="Time zone"
      hint="Days start at midnight in this zone; times are shown in it"
      value={value}
      error={error}
      options={zones.map((zone) => ({ value: zone, label: zone.replaceAll('_', ' ') }))}
    />
  );
}
