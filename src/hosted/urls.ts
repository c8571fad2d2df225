/** Where payers go: the public pages of a Weir served at `publicUrl` (no trailing slash). */

/** The hosted checkout page of a session. */
export const checkoutPageUrl = (publicUrl: string, checkoutSessionId: string): string =>
  `${publicUrl}/checkout/${checkoutSessionId}`;

/** The hosted page of an invoice: the invoice as a document, with its pay action; its public `url`. */
export const invoicePageUrl = (publicUrl: string, invoiceId: string): string => `${publicUrl}/invoices/${invoiceId}`;

/** The pay link of an invoice: it opens a checkout session for what is still due. */
export const invoicePayUrl = (publicUrl: string, invoiceId: string): string => `${publicUrl}/invoices/${invoiceId}/pay`;

/** The public page of a payment link. */
export const paymentLinkUrl = (publicUrl: string, paymentLinkId: string): string => `${publicUrl}/pay/${paymentLinkId}`;
