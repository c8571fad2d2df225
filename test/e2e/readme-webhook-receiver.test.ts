import { createHmac, timingSafeEqual } from 'node:crypto';
import test from 'ava';
import { webhookHeaders } from '../../src/webhooks/webhook-headers.ts';
import { codeBlocks, readmeSection } from '../support/readme.ts';

type Verified = (body: string, header?: string) => boolean;

/** The README receiver's `verified` as written, keyed with `secret` (the rest of the block starts a server). */
function readmeVerifier(secret: string): Verified {
  const [block] = codeBlocks(readmeSection('### Webhooks'), 'js');
  const source = /\nfunction verified\([\s\S]*?\n}\n/.exec(block ?? '')?.[0];
  if (!source) throw new Error('the README receiver no longer has a verified() function');
  return new Function('createHmac', 'timingSafeEqual', 'secret', `${source}\nreturn verified;`)(
    createHmac,
    timingSafeEqual,
    secret,
  ) as Verified;
}

test("the README receiver accepts a delivery signed by its secret, whichever v1 of an overlap's header it is", (t) => {
  const body = '{"id":"e1","type":"webhook_endpoint.test"}';
  const header = (secret: string, previousSecret?: string) =>
    webhookHeaders({ secret, previousSecret, body, eventId: 'e1', nowMs: Date.now() })['x-weir-signature'];
  t.true(readmeVerifier('whsec_new')(body, header('whsec_new')));
  t.true(readmeVerifier('whsec_new')(body, header('whsec_new', 'whsec_old')), 'the first v1');
  t.true(readmeVerifier('whsec_old')(body, header('whsec_new', 'whsec_old')), 'the second v1');
  t.false(readmeVerifier('whsec_other')(body, header('whsec_new', 'whsec_old')));
  t.false(readmeVerifier('whsec_old')(body, header('whsec_new')));
  t.false(readmeVerifier('whsec_new')(`${body} `, header('whsec_new')), 'another body');
  t.false(readmeVerifier('whsec_new')(body, undefined), 'no header');
  t.false(readmeVerifier('whsec_new')(body, header('whsec_new').replace(/v1=./, 'v1=é')), 'a mangled v1');
});
