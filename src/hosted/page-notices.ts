/**
 * What a hosted page says instead of itself, and with which status: plain words for the payer,
 * never the refusal or the error behind it. `retry`: trying again may help, so the page offers a
 * way back to the page it stands in for.
 */
export type PageNotice = { status: number; heading: string; message: string; retry?: boolean };

/** The passing refusals of the checkout and invoice pages (the payment link's own are LINK_NOTICES). */
export type RefusalNotices = {
  /** 429: its message says what happened; the page adds when to try again (`tryAgainIn`), as `Retry-After` says. */
  rateLimited: PageNotice;
  /** 429 of the tighter limit on requests that start a payment (`hosted_creates`), as `rateLimited`; absent: `rateLimited`. */
  startsLimited?: PageNotice;
  /** 413: a form too large to read. */
  tooLarge: PageNotice;
  /** 503: a service Weir relies on did not answer, a record was busy. */
  unavailable: PageNotice;
  /** A body that could not be read (compressed, of another type, malformed): shown with the refusal's status, 415 or 400. */
  unreadable: PageNotice;
};

/** A rate limit on reading the pages: the words of every hosted page, the payment link's too. */
export const TOO_MANY_REQUESTS: PageNotice = {
  status: 429,
  heading: 'Too many requests',
  message: 'Too many requests came from your connection in a short time.',
  retry: true,
};

/**
 * When to try again, in a person's words, from `Retry-After`'s whole seconds: rounded up, so the payer
 * who waits that long is let in ("Try again in 5 seconds.", "in about a minute", "in 3 minutes").
 */
export function tryAgainIn(seconds: number): string {
  const count = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  const whole = Math.max(1, Math.ceil(seconds));
  if (whole < 60) return `Try again in ${count(whole, 'second')}.`;
  const minutes = Math.ceil(whole / 60);
  if (minutes === 1) return 'Try again in about a minute.';
  if (minutes < 120) return `Try again in ${count(minutes, 'minute')}.`;
  const hours = Math.ceil(minutes / 60);
  return `Try again in ${count(hours, 'hour')}.`;
}

const TOO_MUCH_TO_SEND: PageNotice = {
  status: 413,
  heading: 'Too much to send',
  message: 'What you entered is too long to send. Go back, shorten it and try again.',
  retry: true,
};

/** Only a client that is not a browser, or something between it and Weir, sends a page what it cannot read. */
const NOT_READ: PageNotice = {
  status: 400,
  heading: 'What was sent could not be read',
  message: 'It was not sent the way this page sends it. Go back to the page and try again from there.',
  retry: true,
};

export const CHECKOUT_NOTICES: RefusalNotices = {
  rateLimited: TOO_MANY_REQUESTS,
  tooLarge: TOO_MUCH_TO_SEND,
  unreadable: NOT_READ,
  unavailable: {
    status: 503,
    heading: 'Checkout not available just now',
    message: 'This checkout cannot be reached just now. Please try again in a moment.',
    retry: true,
  },
};

export const INVOICE_NOTICES: RefusalNotices = {
  rateLimited: TOO_MANY_REQUESTS,
  tooLarge: TOO_MUCH_TO_SEND,
  unreadable: NOT_READ,
  unavailable: {
    status: 503,
    heading: 'Invoice not available just now',
    message: 'This invoice cannot be shown or paid just now. Nothing has been charged. Please try again in a moment.',
    retry: true,
  },
};

/** An unexpected error on any hosted page: it is logged, and the payer is told only that it was ours. */
export const SOMETHING_WENT_WRONG: PageNotice = {
  status: 500,
  heading: 'Something went wrong',
  message: 'Something went wrong on our side. Please try again later.',
  retry: true,
};

/** A method a hosted page does not take (`PUT /checkout/{id}`): the page says so; its `Allow` header names the methods. */
export const NOT_THIS_WAY: PageNotice = {
  status: 405,
  heading: 'This page cannot be used this way',
  message: 'This page only opens as a link in your browser and through its own buttons and forms.',
  retry: true,
};

/**
 * A path under a hosted page that no route has (`/pay/{id}/foo`): a page saying so, with the way back
 * to the page of the record the path names, when it names one.
 */
export const NO_SUCH_PAGE: PageNotice = {
  status: 404,
  heading: 'Page not found',
  message: 'There is no page at this address. Check the link you followed, or ask whoever sent it for a new one.',
  retry: true,
};
