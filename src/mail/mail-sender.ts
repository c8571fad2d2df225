import type { Organization } from '../actors/organization.ts';

/** What mails show of the business they are from: its details and branding. */
export type MailSender = Pick<
  Organization,
  | 'name'
  | 'email'
  | 'supportEmail'
  | 'supportPhone'
  | 'addressDetails'
  | 'websiteUrl'
  | 'companyIdentificationNumber'
  | 'taxIdentificationNumber'
  | 'brandColor'
  | 'brandLogo'
>;

/** The sender part of an organization's record, as a pending mail keeps it (nothing else of the record). */
export const mailSenderOf = (org: Organization): MailSender => ({
  name: org.name,
  email: org.email,
  supportEmail: org.supportEmail,
  supportPhone: org.supportPhone,
  addressDetails: org.addressDetails,
  websiteUrl: org.websiteUrl,
  companyIdentificationNumber: org.companyIdentificationNumber,
  taxIdentificationNumber: org.taxIdentificationNumber,
  brandColor: org.brandColor,
  brandLogo: org.brandLogo,
});
