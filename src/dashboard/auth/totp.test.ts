import test from 'ava';
import {
  base32Decode,
  base32Encode,
  generateTotpSecret,
  otpauthUrl,
  totpCode,
  totpStepAt,
  verifyTotp,
} from './totp.ts';
import { generateRecoveryCodes, hashRecoveryCode, normalizeRecoveryCode } from './recovery-codes.ts';

// RFC 6238 appendix B's SHA-1 key, "12345678901234567890", in base32.
const RFC_SECRET = base32Encode(Buffer.from('12345678901234567890'));

test('base32 round-trips and reads a key as people type it', (t) => {
  t.is(RFC_SECRET, 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  t.deepEqual(base32Decode('gezd gnbv gy3t qojq gezd gnbv gy3t qojq'), Buffer.from('12345678901234567890'));
  t.is(base32Decode('not base32!'), null);
  const secret = generateTotpSecret();
  t.regex(secret, /^[A-Z2-7]{32}$/, '160 bits');
  t.is(base32Decode(secret)?.length, 20);
});

test("codes are RFC 6238's test vectors (their last 6 digits)", (t) => {
  // Appendix B: T = 59 s → 94287082, 1111111109 → 07081804, 1234567890 → 89005924, 2000000000 → 69279037.
  const at = (seconds: number) => totpCode(RFC_SECRET, totpStepAt(seconds * 1000));
  t.is(at(59), '287082');
  t.is(at(1111111109), '081804');
  t.is(at(1234567890), '005924');
  t.is(at(2000000000), '279037');
});

test('a code is taken in its own step and one step either side, on the clock it is given; nothing further', (t) => {
  const now = 1_767_225_600_000; // a step boundary
  const step = totpStepAt(now);
  const code = (s: number) => totpCode(RFC_SECRET, s);
  t.is(verifyTotp(RFC_SECRET, code(step), now), step);
  t.is(verifyTotp(RFC_SECRET, code(step - 1), now), step - 1, 'the step just gone (a slow typist)');
  t.is(verifyTotp(RFC_SECRET, code(step + 1), now), step + 1, 'a phone a little ahead');
  t.is(verifyTotp(RFC_SECRET, code(step - 2), now), null, 'a minute old');
  t.is(verifyTotp(RFC_SECRET, code(step + 2), now), null);
  t.is(verifyTotp(RFC_SECRET, code(step), now + 29_999), step, 'to the end of its step');
  t.is(verifyTotp(RFC_SECRET, code(step), now + 60_000), null, 'two steps later');
  t.is(verifyTotp(RFC_SECRET, `${code(step).slice(0, 3)} ${code(step).slice(3)}`, now), step, 'spaces ignored');
  t.is(verifyTotp(RFC_SECRET, 'abcdef', now), null);
  t.is(verifyTotp(RFC_SECRET, '', now), null);
});

test('the otpauth address names the issuer, the account and the parameters apps read', (t) => {
  const url = new URL(otpauthUrl({ secret: RFC_SECRET, account: 'ada@example.com', issuer: 'Weir' }));
  t.is(url.protocol, 'otpauth:');
  t.is(url.host, 'totp');
  t.is(decodeURIComponent(url.pathname), '/Weir:ada@example.com');
  t.like(Object.fromEntries(url.searchParams), { secret: RFC_SECRET, issuer: 'Weir', digits: '6', period: '30' });
});

test('recovery codes: ten of 80 bits, read back in any case and with or without dashes, hashed per user', (t) => {
  const codes = generateRecoveryCodes();
  t.is(codes.length, 10);
  t.is(new Set(codes).size, 10);
  for (const code of codes) t.regex(code, /^[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$/);
  const code = codes[0]!;
  const plain = normalizeRecoveryCode(code)!;
  t.is(normalizeRecoveryCode(code.toLowerCase().replace(/-/g, ' ')), plain);
  t.is(normalizeRecoveryCode('123456'), null, 'a TOTP code is not a recovery code');
  t.not(hashRecoveryCode('u-1', plain), hashRecoveryCode('u-2', plain));
  t.regex(hashRecoveryCode('u-1', plain), /^[0-9a-f]{64}$/);
});
