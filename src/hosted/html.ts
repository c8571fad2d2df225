import { assetUrl, brandStylesheetUrl, iconUrl, type AssetName } from './assets.ts';

/** Escape text for HTML element content and attribute values. */
export const escapeHtml = (value: unknown): string =>
  String(value ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** What a hosted page shows of the merchant. */
export type Branding = { name: string; brandColor: string | null; brandLogo: string | null };

/**
 * The frame hosted pages share: the document head with Weir's stylesheet (and the brand colour's,
 * when the organization has one), a header in the brand colour with the logo and the business
 * name, one card (`main`, already HTML), and the page's script, if any, from /assets with its
 * data attributes (`data-*`, values escaped here). No inline style or script (see headers.ts). A page
 * with a script also links no-script.css inside <noscript>: without the script, the controls only
 * it works (marked `needs-script`) are not shown.
 */
export function hostedPage(page: {
  title: string;
  /** The body's class, which scopes the page's own rules in hosted.css. */
  kind: 'checkout' | 'payment-link' | 'invoice' | 'error';
  org: Branding | null;
  business: string;
  main: string;
  /** Below the card, e.g. the business details (already HTML). */
  footer?: string;
  /**
   * A test-environment page: "Test mode" beside the business name. Every hosted page of a test record
   * (checkout, invoice, payment link and its notices) says it, so a payer testing never mistakes one for live.
   */
  testMode?: boolean;
  /**
   * The page's script, and the shared scripts it uses (`needs`), loaded first and not deferred: there
   * for it and for the deferred scripts the page's parts bring (the checkout page's wallet scripts).
   */
  script?: { name: AssetName; data?: Record<string, string>; needs?: AssetName[] };
  /** The page's own stylesheets, after hosted.css (the invoice document's). */
  stylesheets?: AssetName[];
  /**
   * Names for the header and main landmarks: a page framed inside another (the dashboard's branding
   * preview) must not repeat its host's unnamed banner and main.
   */
  landmarks?: { header: string; main: string };
}): string {
  const logo = page.org?.brandLogo ? `<img class="logo" src="${escapeHtml(page.org.brandLogo)}" alt="">` : '';
  const brand = page.org?.brandColor ? brandStylesheetUrl(page.org.brandColor) : null;
  const data = Object.entries(page.script?.data ?? {})
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<link rel="icon" href="${iconUrl('favicon')}" type="image/svg+xml">
<link rel="stylesheet" href="${assetUrl('hosted.css')}">
${page.script ? `<noscript><link rel="stylesheet" href="${assetUrl('no-script.css')}"></noscript>\n` : ''}${(page.stylesheets ?? []).map((name) => `<link rel="stylesheet" href="${assetUrl(name)}">\n`).join('')}${brand ? `<link rel="stylesheet" href="${brand}">\n` : ''}</head>
<body class="${page.kind}">
<header${page.landmarks ? ` aria-label="${escapeHtml(page.landmarks.header)}"` : ''}>${logo}<strong>${escapeHtml(page.business)}</strong>${page.testMode ? ' <span class="badge">Test mode</span>' : ''}</header>
<main${page.landmarks ? ` aria-label="${escapeHtml(page.landmarks.main)}"` : ''}>
${page.main}
</main>
${page.footer ? `${page.footer}\n` : ''}${(page.script?.needs ?? []).map((name) => `<script src="${assetUrl(name)}"></script>\n`).join('')}${page.script ? `<script src="${assetUrl(page.script.name)}"${data}></script>\n` : ''}</body>
</html>`;
}
