import type { Branding } from './html.ts';
import { escapeHtml as e, hostedPage } from './html.ts';

/**
 * The page a browser gets for a hosted page that is not there (an unknown or removed session,
 * invoice or link): HTML in the hosted frame, not the API's JSON error.
 */
export function renderErrorPage(input: { org?: Branding | null; heading: string; message: string }): string {
  return hostedPage({
    title: input.heading,
    kind: 'error',
    org: input.org ?? null,
    business: input.org?.name ?? 'Weir',
    main: `  <h1>${e(input.heading)}</h1>
  <p id="notice">${e(input.message)}</p>`,
  });
}
