import test from 'ava';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { assertError, assertRejectedWithoutWrite } from './helpers.ts';

// The smallest valid headers of each accepted type, padded: the check reads the bytes, not the claim.
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 2)]);
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(64, 3)]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBP'), Buffer.alloc(64, 4)]);

/** PUT /organization/brand as the reference sends it: multipart/form-data with a `brandLogo` file. */
function upload(url: string, key: string, parts: { brandColor?: string; file?: Buffer; type?: string; name?: string }) {
  const form = new FormData();
  if (parts.brandColor !== undefined) form.append('brandColor', parts.brandColor);
  if (parts.file)
    form.append(parts.name ?? 'brandLogo', new Blob([parts.file], { type: parts.type ?? 'image/png' }), 'logo.png');
  return fetch(`${url}/api/v1/organization/brand`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown>, headers: r.headers }));
}

test('a logo uploaded as multipart/form-data is stored and served publicly with its own image type', async (t) => {
  const weir = await startTestWeir(t);
  const { api, testSecretKey } = await createMerchant(weir.url);
  for (const [file, type] of [
    [PNG, 'image/png'],
    [JPEG, 'image/jpeg'],
    [GIF, 'image/gif'],
    [WEBP, 'image/webp'],
  ] as const) {
    // The claimed type is ignored: what is served is what the bytes are.
    const answer = await upload(weir.url, testSecretKey, { brandColor: '#123456', file, type: 'text/html' });
    t.is(answer.status, 200, JSON.stringify(answer.body));
    t.is(answer.body.brandColor, '#123456');
    const logo = answer.body.brandLogo as string;
    t.regex(logo, new RegExp(`^${weir.url}/assets/logos/[0-9a-f]{64}$`));
    const served = await fetch(logo);
    t.is(served.status, 200);
    t.is(served.headers.get('content-type'), type);
    t.is(served.headers.get('x-content-type-options'), 'nosniff');
    t.regex(served.headers.get('content-security-policy') ?? '', /default-src 'none'; sandbox/);
    t.deepEqual(Buffer.from(await served.arrayBuffer()), file);
  }
  // The same file twice is the same logo; a colour-less upload keeps the colour.
  const again = await upload(weir.url, testSecretKey, { file: PNG });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.is(again.body.brandColor, '#123456');
  const first = await upload(weir.url, testSecretKey, { file: PNG });
  t.is(first.body.brandLogo, again.body.brandLogo);
  t.is((await api.get<{ brandLogo: string }>('/api/v1/organization')).body.brandLogo, again.body.brandLogo as string);
  t.is((await fetch(`${weir.url}/assets/logos/${'0'.repeat(64)}`)).status, 404);
});

test('an upload that is not a small PNG, JPEG, WebP or GIF is refused without a write', async (t) => {
  const weir = await startTestWeir(t);
  const { testSecretKey } = await createMerchant(weir.url);
  const send = (parts: Parameters<typeof upload>[2]) => () =>
    upload(weir.url, testSecretKey, parts).then((r) => ({ ...r, body: r.body as unknown }));
  await assertRejectedWithoutWrite(
    t,
    weir,
    send({ file: Buffer.from('<svg onload="alert(1)"/>'), type: 'image/svg+xml' }),
    {
      field: 'brandLogo',
      code: 'unsupported_image_type',
    },
  );
  await assertRejectedWithoutWrite(t, weir, send({ file: Buffer.from('<html><script>x</script>') }), {
    field: 'brandLogo',
  });
  await assertRejectedWithoutWrite(t, weir, send({ file: Buffer.concat([PNG, Buffer.alloc(300 * 1024)]) }), {
    field: 'brandLogo',
    message: /at most 262144 bytes/,
  });
  await assertRejectedWithoutWrite(t, weir, send({ file: Buffer.alloc(0) }), { field: 'brandLogo' });
  await assertRejectedWithoutWrite(t, weir, send({ brandColor: 'red', file: PNG }), { field: 'brandColor' });
  await assertRejectedWithoutWrite(t, weir, send({ file: PNG, name: 'avatar' }), { field: 'avatar' });
  await assertRejectedWithoutWrite(t, weir, send({}), { field: 'brandColor', code: 'parameter_missing' });
  // A broken form is a 400, not a 500.
  const broken = await fetch(`${weir.url}/api/v1/organization/brand`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${testSecretKey}`, 'content-type': 'multipart/form-data; boundary=xyz' },
    body: '--xyz\r\nno headers end',
  });
  assertError(t, { status: broken.status, body: await broken.json(), headers: broken.headers }, 400, {
    code: 'invalid_multipart',
  });
});
