/**
 * `value` (a URL as given, maybe malformed) with anything before its last `@` (a user and password)
 * shown as `***`, so an error can say which value was wrong without printing its password.
 */
export function maskUserinfo(value: string): string {
  const found = /^([a-z][a-z0-9+.-]*:\/+)?([^?#]*)@/i.exec(value);
  if (!found) return value;
  return `${found[1] ?? ''}***@${value.slice(found[0].length)}`;
}

/**
 * An RPC endpoint as logs and errors may show it: scheme and host only, since providers put their
 * API key in the path, the query or the user (`https://host/v2/<key>`, `?api-key=…`).
 */
export function endpointLabel(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed) return maskUserinfo(url).replace(/[/?#].*$/, '/…');
  const rest = parsed.pathname !== '/' || parsed.search !== '' || parsed.username !== '' ? '/…' : '';
  return `${parsed.protocol}//${parsed.host}${rest}`;
}
