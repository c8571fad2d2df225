import test from 'ava';
import { businessFooter } from './business-footer.ts';

test('the footer shows the business details given, escaped, the country by name, and links only to http(s) addresses', (t) => {
  const html = businessFooter({
    name: 'Corner <Coffee>',
    supportEmail: 'help@corner.example',
    supportPhone: '+44 20 7946 0000',
    addressDetails: { line1: '1 Bean St', line2: null, city: 'London', state: null, postalCode: 'E1', country: 'GB' },
    websiteUrl: 'https://corner.example',
    termsUrl: 'javascript:alert(1)',
    privacyUrl: 'https://corner.example/privacy',
    supportUrl: null,
  });
  t.regex(html, /Corner &lt;Coffee&gt;/);
  t.regex(html, /<a href="mailto:help@corner\.example">/);
  t.regex(html, /<a href="tel:\+442079460000">\+44 20 7946 0000<\/a>/);
  t.regex(html, /1 Bean St<br>E1 London<br>United Kingdom<\/address>/);
  t.regex(html, /<a href="https:\/\/corner\.example\/privacy">Privacy<\/a>/);
  t.notRegex(html, /javascript|Terms|Support</);
  t.is(businessFooter(null), '');
  // Only the name: no empty address, contact or links.
  t.notRegex(businessFooter({ name: 'Bare' }), /<address|contact|<nav/);
});
