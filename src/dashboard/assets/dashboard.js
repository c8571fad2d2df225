// Weir dashboard: live updates. The page subscribes to /dashboard/events (server-sent events); each
// message names a topic (payments, checkout-sessions, webhooks, ...) and is dispatched on <body> as
// `weir:<topic>`, which htmx elements listen to (hx-trigger="weir:payments from:body") to reload
// their own fragment. Served from Weir itself; the CSP allows no inline script.
(() => {
  const body = document.body;
  const url = body.dataset.events;
  if (!url || !('EventSource' in window)) return;
  const source = new EventSource(url);
  source.addEventListener('open', () => {
    body.dataset.live = 'on';
  });
  source.addEventListener('error', () => {
    body.dataset.live = 'off';
  });
  source.addEventListener('message', (event) => {
    for (const topic of String(event.data).split(' ')) {
      if (/^[a-z-]+$/.test(topic)) body.dispatchEvent(new CustomEvent(`weir:${topic}`));
    }
  });
  // A session that ended (signed out elsewhere, expired) answers htmx with HX-Redirect to the login page.
  window.addEventListener('pagehide', () => source.close());
})();

// Copy buttons (ui/copy.tsx): shown only where the clipboard can be written; they copy the input
// they name and say so (for screen readers too, in the field's status line).
(() => {
  const wire = (root) => {
    for (const button of root.querySelectorAll('button[data-copy]')) {
      if (button.dataset.wired || !navigator.clipboard) continue;
      button.dataset.wired = 'yes';
      button.hidden = false;
      button.addEventListener('click', async () => {
        const input = document.getElementById(button.dataset.copy);
        const status = document.querySelector(`[data-copy-status="${button.dataset.copy}"]`);
        if (!input) return;
        try {
          await navigator.clipboard.writeText(input.value);
          button.textContent = 'Copied';
          if (status) status.textContent = 'Copied to the clipboard';
        } catch {
          input.select();
          if (status) status.textContent = 'Select the text and copy it';
        }
      });
    }
  };
  wire(document);
  document.body.addEventListener('htmx:afterSwap', (event) => wire(event.target));
})();

// A page that answers a form post names its own address (AppLayout's `location`): it replaces the
// post in the address bar and history, so a reload reads the page (a secret shown once stays
// hidden) instead of posting the form again.
(() => {
  const path = document.body.dataset.location;
  if (path && path !== window.location.pathname) window.history.replaceState(null, '', path);
})();

// A form kept through a live refresh (hx-preserve) keeps its values; where the browser has no
// Element.moveBefore, htmx moves it out and back, which drops focus: give the field its focus and caret again.
(() => {
  let kept = null;
  document.body.addEventListener('htmx:beforeSwap', () => {
    const field = document.activeElement;
    kept = field?.closest('[hx-preserve]')
      ? { field, start: field.selectionStart ?? null, end: field.selectionEnd ?? null }
      : null;
  });
  document.body.addEventListener('htmx:afterSwap', () => {
    if (!kept) return;
    const { field, start, end } = kept;
    kept = null;
    if (!field.isConnected || document.activeElement === field) return;
    field.focus({ preventScroll: true });
    if (start !== null && field.setSelectionRange) {
      try {
        field.setSelectionRange(start, end);
      } catch {
        // a select or another control without a caret
      }
    }
  });
})();

// A link to a collapsed section (the test delivery, #delivery-…, after Send test event) opens it:
// the browser scrolls to a <details> but leaves it closed. Again once a live refresh draws it (it
// may not be in the log yet when the link is followed; a refresh draws it closed).
(() => {
  const openTarget = () => {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id ? document.getElementById(id) : null;
    if (target instanceof HTMLDetailsElement) target.open = true;
  };
  openTarget();
  window.addEventListener('hashchange', openTarget);
  document.body.addEventListener('htmx:afterSwap', openTarget);
})();
