/**
 * What a hosted page says instead of itself, and with which status: plain words for the payer,
 * never the refusal or the error behind it. `retry`: trying again may help, so the page offers a
 * way back to the page it stands in for.
 */
export type PageNotice = { status: number; heading: string; message: string; retry?: boolean };

/** The passing refusals of the checkout and invoice pages (the payment link's own are LINK_NOTICES). */
export type RefusalNotices = {
  /** 429: `Retry-After` says when, in seconds; the words say it for a person. */
  rateLimited: PageNotice;
  /** 413: a form too large to read. */
  tooLarge: PageNotice;
  /** 503: a service Weir relies on did not answer, a record was busy. */
  unavailable: PageNotice;
};

const TOO_MANY_REQUESTS: PageNotice = {
  status: 429,
  heading: 'Too many requests',
  message: 'Too many requests came from your connection in a short time. Wait a minute, then try again.',
  retry: true,
};

const TOO_MUCH_TO_SEND: PageNotice = {
  status: 413,
  heading: 'Too much to send',
  message: 'What you entered is too long to send. Go back, shorten it and try again.',
  retry: true,
};

export const CHECKOUT_NOTICES: RefusalNotices = {
  rateLimited: TOO_MANY_REQUESTS,
  tooLarge: TOO_MUCH_TO_SEND,
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
