import test from 'ava';
import { everyHostedPage, type HostedPage } from '../support/hosted-pages.ts';
import { startTestWeir } from '../support/weir-harness.ts';

/** A Content-Security-Policy as directive → sources. */
function directives(policy: string | null): Map<string, string[]> {
  return new Map(
    (policy ?? '')
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((parts) => parts[0] !== '')
      .map(([name, ...sources]) => [name!.toLowerCase(), sources]),
  );
}

const fetchPage = (page: HostedPage) =>
  fetch(page.url, {
    redirect: 'manual',
    ...(page.form
      ? {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(page.form).toString(),
        }
      : {}),
  });

test("hosted pages: frame-ancestors 'none' and X-Frame-Options DENY, scripts and styles from Weir's own origin only (no 'unsafe-inline', no 'unsafe-eval'), base-uri and object-src 'none', no Referer; no inline script, handler or style in any page", async (t) => {
  const weir = await startTestWeir(t);
  const { pages } = await everyHostedPage(weir.url, 'https://cdn.example/logo.png');
  for (const page of pages) {
    const response = await fetchPage(page);
    t.is(response.status, page.status, page.name);
    const csp = directives(response.headers.get('content-security-policy'));
    t.deepEqual(csp.get('default-src'), ["'none'"], page.name);
    t.deepEqual(csp.get('script-src'), ["'self'"], page.name);
    t.deepEqual(csp.get('style-src'), ["'self'"], page.name);
    t.deepEqual(csp.get('frame-ancestors'), ["'none'"], page.name);
    t.deepEqual(csp.get('base-uri'), ["'none'"], page.name);
    t.deepEqual(csp.get('object-src'), ["'none'"], page.name);
    t.false(
      [...csp.values()].flat().some((source) => /unsafe-(inline|eval|hashes)/.test(source)),
      `${page.name}: ${response.headers.get('content-security-policy')}`,
    );
    t.is(response.headers.get('x-frame-options'), 'DENY', page.name);
    t.is(response.headers.get('referrer-policy'), 'no-referrer', page.name);
    t.is(response.headers.get('x-content-type-options'), 'nosniff', page.name);
    const body = await response.text();
    if (!page.html) continue;
    t.regex(response.headers.get('content-type') ?? '', /^text\/html/, page.name);
    t.regex(body, /<link rel="stylesheet" href="\/assets\/hosted\.css\?v=[0-9a-f]{16}">/, page.name);
    if (page.branded !== false) t.regex(body, /<link rel="stylesheet" href="\/assets\/brand\/8a2be2\.css">/, page.name);
    t.notRegex(body, /<script(?![^>]*\ssrc=)[^>]*>/i, `${page.name}: an inline script`);
    t.notRegex(body, /\son[a-z]+\s*=/i, `${page.name}: an inline event handler`);
    t.notRegex(body, /<style|\sstyle\s*=/i, `${page.name}: an inline style`);
    t.notRegex(body, /javascript:/i, page.name);
  }
});

test('hosted page assets: served by Weir from the package with caching headers: a year and immutable under their content hash, five minutes without it, 304 for a known ETag; the brand stylesheet for a hex colour only', async (t) => {
  const weir = await startTestWeir(t);
  const { session, link } = await everyHostedPage(weir.url, 'https://cdn.example/logo.png');
  const checkout = await (await fetch(session.url)).text();
  const linkPage = await (await fetch(link.url)).text();
  const scripts = [
    /<script src="(\/assets\/checkout\.js\?v=[0-9a-f]{16})" data-session="([^"]+)"><\/script>/.exec(checkout),
    /<script src="(\/assets\/payment-link\.js\?v=[0-9a-f]{16})"><\/script>/.exec(linkPage),
  ];
  t.truthy(scripts[0], checkout);
  t.is(scripts[0]![2], session.id);
  t.truthy(scripts[1], linkPage);
  // What checkout.js and the wallet scripts share, loaded just before checkout.js.
  const shared =
    /<script src="(\/assets\/hosted-fetch\.js\?v=[0-9a-f]{16})"><\/script>\n<script src="\/assets\/checkout\.js/.exec(
      checkout,
    );
  t.truthy(shared, checkout);
  const css = /href="(\/assets\/hosted\.css\?v=[0-9a-f]{16})"/.exec(checkout)![1]!;
  for (const [path, type] of [
    [scripts[0]![1]!, 'text/javascript; charset=utf-8'],
    [scripts[1]![1]!, 'text/javascript; charset=utf-8'],
    [shared![1]!, 'text/javascript; charset=utf-8'],
    [css, 'text/css; charset=utf-8'],
  ] as const) {
    const versioned = await fetch(`${weir.url}${path}`);
    t.is(versioned.status, 200, path);
    t.is(versioned.headers.get('content-type'), type, path);
    t.is(versioned.headers.get('cache-control'), 'public, max-age=31536000, immutable', path);
    t.is(versioned.headers.get('x-content-type-options'), 'nosniff');
    const etag = versioned.headers.get('etag');
    t.truthy(etag, path);
    t.true((await versioned.text()).length > 100, path);
    const bare = await fetch(`${weir.url}${path.replace(/\?v=.*/, '')}`);
    t.is(bare.status, 200, path);
    t.is(bare.headers.get('cache-control'), 'public, max-age=300', path);
    // As a browser revalidates (fetch() itself would add Cache-Control: no-cache to a conditional request).
    const again = await fetch(`${weir.url}${path}`, {
      headers: { 'if-none-match': etag!, 'cache-control': 'max-age=0' },
    });
    t.is(again.status, 304, path);
    t.is(await again.text(), '');
  }
  const brand = await fetch(`${weir.url}/assets/brand/8a2be2.css`);
  t.is(brand.status, 200);
  t.is(brand.headers.get('content-type'), 'text/css; charset=utf-8');
  t.is(brand.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.is(await brand.text(), ':root { --brand: #8a2be2; }\n');
  for (const path of [
    '/assets/brand/red.css',
    '/assets/brand/8a2be2;x.css',
    '/assets/nope.js',
    '/assets/..%2fhtml.ts',
  ]) {
    const missing = await fetch(`${weir.url}${path}`);
    t.is(missing.status, 404, path);
    t.like(await missing.json(), { statusCode: 404, code: 'resource_missing' }, path);
  }
});
