import test from 'ava';
import { ValidationError } from '../shared/errors.ts';
import { encodeMultipart, parseMultipart, sniffImage } from './brand-logo.ts';

const form = (boundary: string, parts: string[]) =>
  Buffer.from(`preamble\r\n${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}--\r\n`, 'latin1');

test('parseMultipart reads fields and files, with a quoted boundary too', (t) => {
  const body = form('a b', [
    'Content-Disposition: form-data; name="brandColor"\r\n\r\n#123456',
    'Content-Disposition: form-data; name="brandLogo"; filename="l.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n--a',
  ]);
  const parts = parseMultipart(body, 'multipart/form-data; boundary="a b"');
  t.deepEqual(
    parts.map((p) => [p.name, p.filename, p.data.toString('latin1')]),
    [
      ['brandColor', null, '#123456'],
      ['brandLogo', 'l.png', '\x89PNG\r\n--a'],
    ],
  );
});

test('parseMultipart refuses what it cannot read, as a 400 and within bounds', (t) => {
  const refuse = (body: string, type = 'multipart/form-data; boundary=x') =>
    t.throws(() => parseMultipart(Buffer.from(body, 'latin1'), type), { instanceOf: ValidationError });
  refuse('--x\r\n\r\n--x--', 'multipart/form-data');
  refuse('no boundary at all');
  refuse('--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated');
  refuse('--x\r\nContent-Disposition: form-data\r\n\r\nv\r\n--x--');
  refuse('--xjunk');
  const many = form(
    'x',
    Array.from({ length: 9 }, (_, i) => `Content-Disposition: form-data; name="f${i}"\r\n\r\nv`),
  );
  t.throws(() => parseMultipart(many, 'multipart/form-data; boundary=x'), { message: /more than 8 parts/ });
});

test('sniffImage knows PNG, JPEG, GIF and WebP by their bytes, and nothing else', (t) => {
  t.is(sniffImage(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0])), 'image/png');
  t.is(sniffImage(Buffer.from([0xff, 0xd8, 0xff, 0xdb])), 'image/jpeg');
  t.is(sniffImage(Buffer.from('GIF87a...')), 'image/gif');
  t.is(sniffImage(Buffer.from('RIFF\0\0\0\0WEBPVP8 ')), 'image/webp');
  for (const other of ['<svg/>', 'RIFF\0\0\0\0WAVE', 'GIF90a', '', '\x89PNG'])
    t.is(sniffImage(Buffer.from(other, 'latin1')), null, other);
});

test('encodeMultipart writes what parseMultipart reads back, bytes of a file as they were', (t) => {
  const file = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0xff]);
  const parts = [
    { name: 'brandColor', filename: null, data: Buffer.from('#123456') },
    { name: 'brandLogo', filename: 'logo "1".png', data: file },
  ];
  const { contentType, bytes } = encodeMultipart(parts);
  t.deepEqual(parseMultipart(bytes, contentType), [parts[0], { ...parts[1], filename: 'logo _1_.png' }]);
});
