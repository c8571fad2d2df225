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

/** Answers a browser's request for a hosted page that is not there: 404, as the page above. */
export function answerNotFoundPage(
  ctx: { status: number; type: string; body: unknown },
  page: { heading: string; message: string },
): void {
  ctx.status = 404;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = renderErrorPage(page);
}
