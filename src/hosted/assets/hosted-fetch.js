// What the hosted checkout page's scripts share (checkout.js and the wallet scripts): reading a route's
// JSON answer, and the words for when none comes. Loaded, not deferred, just before checkout.js (see
// checkout-page.ts), so it is there for that script and for the deferred wallet scripts. Served by Weir from /assets.
window.weirHosted = Object.freeze({
  /** The words when the server gives no answer of its own: CHECKOUT_NOTICES.unavailable's (page-notices.ts). */
  UNREACHABLE: 'This checkout cannot be reached just now. Please try again in a moment.',
  /**
   * A route's JSON answer `{ ok, body }`, or null when none came: no connection, or what stands between
   * (a proxy's HTML 502, a captive portal, an empty body) answered instead. Never throws.
   */
  async answer(url, init) {
    try {
      const res = await fetch(url, init);
      return { ok: res.ok, body: await res.json() };
    } catch {
      return null;
    }
  },
});
