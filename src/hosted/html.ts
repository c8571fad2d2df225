/** Escape text for HTML element content and attribute values. */
export const escapeHtml = (value: unknown): string =>
  String(value ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** JSON for a <script> block: `<` escaped so no value can close the element. */
export const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

/** What a hosted page shows of the merchant. */
export type Branding = { name: string; brandColor: string | null; brandLogo: string | null };

const COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/** The organization's brand colour when it is a hex colour, else Weir's. */
export const brandColorOf = (org: Branding | null): string =>
  org?.brandColor && COLOR.test(org.brandColor) ? org.brandColor : '#2f5d62';

/**
 * The frame hosted pages share: the document head, a header in the brand colour with the logo
 * and the business name, and one card (`main`, already HTML). `style` adds the page's own rules.
 */
export function hostedPage(page: {
  title: string;
  org: Branding | null;
  business: string;
  style: string;
  main: string;
  script?: string;
}): string {
  const logo = page.org?.brandLogo ? `<img class="logo" src="${escapeHtml(page.org.brandLogo)}" alt="">` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 0; background: #f5f6f7; color: #1d2327; }
  header { background: ${brandColorOf(page.org)}; color: #fff; padding: 1.2rem 1.5rem; display: flex; gap: .8rem; align-items: center; }
  header .logo { height: 2rem; }
  main { max-width: 32rem; margin: 1.5rem auto; background: #fff; border-radius: .6rem; padding: 1.5rem; box-shadow: 0 1px 3px #0002; }
  .muted { color: #667; font-size: .9rem; }
${page.style}
</style>
</head>
<body>
<header>${logo}<strong>${escapeHtml(page.business)}</strong></header>
<main>
${page.main}
</main>
${page.script ?? ''}
</body>
</html>`;
}
