import type { Branding } from './html.ts';
import { escapeHtml as e, hostedPage } from './html.ts';

/**
 * The page a browser gets for a hosted page that is not there (an unknown or removed session,
 * invoice or link): HTML in the hosted frame, not the API's JSON error.
 */
export function renderErrorPage(input: {
  org?: Branding | null;
  heading: string;
  message: string;
  /** A test record's page says "Test mode", as the page it stands in for does. */
  testMode?: boolean;
  /** A way back to the page it stands in for, where trying again helps. */
  back?: { href: string; words: string } | null;
  /** Below the card, as on the page it stands in for (the payment link's business details). */
  footer?: string;
}): string {
  const back = input.back ? `\n  <p><a id="back" href="${e(input.back.href)}">${e(input.back.words)}</a></p>` : '';
  return hostedPage({
    title: input.heading,
    kind: 'error',
    org: input.org ?? null,
    business: input.org?.name ?? 'Weir',
    testMode: input.testMode ?? false,
    ...(input.footer ? { footer: input.footer } : {}),
    main: `  <h1>${e(input.heading)}</h1>
  <p id="notice">${e(input.message)}</p>${back}`,
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
