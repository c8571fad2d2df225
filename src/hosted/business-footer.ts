import type { BusinessDetails } from '../actors/organization.ts';
import { escapeHtml as e } from './html.ts';
import { addressLines } from './invoice-document.ts';

/** Only http(s) links are shown: a `javascript:` URL in the merchant's settings is never a link. */
const safeUrl = (url: string | null | undefined): string | null => (url && /^https?:\/\//i.test(url) ? url : null);

/** How a payer reaches the business, as links: its support email and phone, the general ones when it has none. */
export function contactLinks(org: Partial<BusinessDetails>): string[] {
  const contact: string[] = [];
  const email = org.supportEmail ?? org.email;
  if (email) contact.push(`<a href="mailto:${e(email)}">${e(email)}</a>`);
  const phone = org.supportPhone ?? org.phone;
  if (phone) contact.push(`<a href="tel:${e(phone.replace(/[^+0-9]/g, ''))}">${e(phone)}</a>`);
  return contact;
}

/**
 * Whom a payer's page sentence tells them to contact, in plain text: the business by name, at its
 * email and phone (support ones first), else its support page or website; the name alone when it
 * set none, so the payer is never sent to a contact they cannot find.
 */
export function contactPhrase(org: (Partial<BusinessDetails> & { name: string }) | null | undefined): string {
  if (!org) return 'the business';
  const ways = [org.supportEmail ?? org.email, org.supportPhone ?? org.phone].filter((w): w is string => Boolean(w));
  const page = safeUrl(org.supportUrl) ?? safeUrl(org.websiteUrl);
  if (ways.length === 0 && page) ways.push(page);
  return ways.length ? `${org.name} at ${ways.join(' or ')}` : org.name;
}

/** The merchant's support page, when it is an http(s) link. */
export const supportUrlOf = (org: Partial<BusinessDetails>): string | null => safeUrl(org.supportUrl);

/**
 * The business details the spec puts on checkout pages (name, address, support email and phone,
 * website, terms and privacy), as the page's footer; parts the merchant left empty are left out.
 */
export function businessFooter(org: (Partial<BusinessDetails> & { name: string }) | null): string {
  if (!org) return '';
  // As the invoice writes it: the country by name (`GB` → United Kingdom), not the code a payer must decode.
  const address = addressLines(org.addressDetails);
  const contact = contactLinks(org);
  const links: string[] = [];
  const website = safeUrl(org.websiteUrl);
  if (website) links.push(`<a href="${e(website)}">Website</a>`);
  const support = supportUrlOf(org);
  if (support) links.push(`<a href="${e(support)}">Support</a>`);
  const terms = safeUrl(org.termsUrl);
  if (terms) links.push(`<a href="${e(terms)}">Terms</a>`);
  const privacy = safeUrl(org.privacyUrl);
  if (privacy) links.push(`<a href="${e(privacy)}">Privacy</a>`);
  const ids = [
    org.companyIdentificationNumber ? `Company no. ${e(org.companyIdentificationNumber)}` : '',
    org.taxIdentificationNumber ? `Tax no. ${e(org.taxIdentificationNumber)}` : '',
  ].filter(Boolean);
  const parts = [
    `<p class="business-name">${e(org.name)}</p>`,
    address.length ? `<address>${address.map(e).join('<br>')}</address>` : '',
    contact.length ? `<p class="contact">${contact.join(' · ')}</p>` : '',
    ids.length ? `<p class="ids">${ids.join(' · ')}</p>` : '',
    links.length
      ? `<nav aria-label="${e(org.name)} links"><ul>${links.map((l) => `<li>${l}</li>`).join('')}</ul></nav>`
      : '',
    '<p class="powered">Payments by Weir</p>',
  ];
  return `<footer class="business" id="business">\n  ${parts.filter(Boolean).join('\n  ')}\n</footer>`;
}
