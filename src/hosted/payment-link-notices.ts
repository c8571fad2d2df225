import { type PageNotice, TOO_MANY_REQUESTS } from './page-notices.ts';

/**
 * What a payment link's page says instead of its form, and with which status: the link cannot be
 * used, or a payment could not be started from it. Plain words for the payer, never the refusal
 * behind it (that names the merchant's wallets, prices and API routes). `retry`: the link still
 * takes payments, so the page offers a way back to its form.
 */
export type LinkNotice = PageNotice;

const ASK_FOR_A_NEW_ONE = 'Ask the seller for a new link.';

export const LINK_NOTICES = {
  notFound: {
    status: 404,
    heading: 'Payment link not found',
    message:
      'This payment link does not exist or is no longer available. Check the address, or ask the seller for a new link.',
  },
  used: {
    status: 410,
    heading: 'Payment link already used',
    message: `This payment link has already been used: it takes one payment only, and that payment has been made. ${ASK_FOR_A_NEW_ONE}`,
  },
  inactive: {
    status: 410,
    heading: 'Payment link inactive',
    message: `This payment link is not active, so it cannot take payments. ${ASK_FOR_A_NEW_ONE}`,
  },
  notSold: {
    status: 410,
    heading: 'Payment link not available',
    message: `This payment link is not available: what it sells is no longer offered, so it cannot take payments. ${ASK_FOR_A_NEW_ONE}`,
  },
  /** The merchant's setup takes no payment now: no wallet for the link's currency, or a broken one. */
  noPaymentMethod: {
    status: 409,
    heading: 'Payment link cannot be paid right now',
    message:
      'This payment link cannot be paid online right now: the seller has no way set up to take this payment. Please contact them.',
  },
  /** Any other refusal of the link's own settings: nothing the payer typed, nothing they can correct. */
  linkSettings: {
    status: 409,
    heading: 'Payment link cannot be paid right now',
    message:
      "This payment link cannot be paid right now: the seller's settings for it do not allow a payment at the moment. Please contact them.",
  },
  /**
   * The limit on starting payments (a POST of the form) spent; its message is followed by when to try
   * again, as `Retry-After` says (`tryAgainIn`). A page view past the read limit is `tooManyRequests`.
   */
  tooManyAttempts: {
    status: 429,
    heading: 'Too many attempts',
    message: 'Too many payments were started from your connection in a short time.',
    retry: true,
  },
  /** The read limit spent (viewing the page, or a form sent past it): followed by when to try again, as above. */
  tooManyRequests: TOO_MANY_REQUESTS,
  formTooLarge: {
    status: 413,
    heading: 'Too much to send',
    message: 'What you entered is too long to send. Go back, shorten your answers and try again.',
    retry: true,
  },
  /** A form that could not be read (compressed, of another type): shown with the refusal's status, 415 or 400. */
  formNotRead: {
    status: 400,
    heading: 'Your answers could not be read',
    message: 'They were not sent the way this page sends its form. Go back to the form and press the button again.',
    retry: true,
  },
  /** A passing failure: a service Weir relies on did not answer, a record was busy. */
  tryAgain: {
    status: 503,
    heading: 'Payment could not be started',
    message: 'Your payment could not be started just now. Nothing has been charged. Please try again in a moment.',
    retry: true,
  },
} as const satisfies Record<string, LinkNotice>;
