/**
 * `value` (a URL as given, maybe malformed) with anything before its last `@` (a user and password)
 * shown as `***`, so an error can say which value was wrong without printing its password.
 */
export function maskUserinfo(value: string): string {
  const found = /^([a-z][a-z0-9+.-]*:\/+)?([^?#]*)@/i.exec(value);
  if (!found) return value;
  return `${found[1] ?? ''}***@${value.slice(found[0].length)}`;
}
