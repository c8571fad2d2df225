import { createHash, randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { EventStore } from '../event-store/event-store.ts';
import type { Clock } from '../shared/clock.ts';
import { ValidationError } from '../shared/errors.ts';
import type { Tenant } from './api-context.ts';

/** A logo is shown small on hosted pages and mails: a quarter megabyte is plenty. */
export const MAX_LOGO_BYTES = 256 * 1024;
const MAX_PARTS = 8;
const STREAM_PREFIX = 'brand_logo-';
const LOGO_PATH = /^\/assets\/logos\/([0-9a-f]{64})$/;

export type ImageType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';

/** The image type by its first bytes (what the bytes are, never what the upload claims), or null. */
export function sniffImage(bytes: Buffer): ImageType | null {
  const starts = (sig: number[], at = 0) => sig.every((b, i) => bytes[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts([0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61)
    return 'image/gif';
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  return null;
}

export type FormPart = { name: string; filename: string | null; data: Buffer };

/**
 * The parts of a `multipart/form-data` body (RFC 7578), by the boundary of its Content-Type.
 * Bounded: at most MAX_PARTS parts; anything malformed is a 400.
 */
export function parseMultipart(body: Buffer, contentType: string): FormPart[] {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  const malformed = (why: string) =>
    new ValidationError(null, `the multipart/form-data body is malformed: ${why}`, 'invalid_multipart');
  if (!boundary) throw malformed('Content-Type has no boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) throw malformed('no part starts with the boundary');
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString('latin1') === '--') return parts;
    if (parts.length >= MAX_PARTS) throw malformed(`more than ${MAX_PARTS} parts`);
    if (body.subarray(at, at + 2).toString('latin1') !== '\r\n') throw malformed('a boundary is not followed by CRLF');
    const headerEnd = body.indexOf('\r\n\r\n', at + 2);
    if (headerEnd < 0) throw malformed('a part has no header end');
    const headers = body.subarray(at + 2, headerEnd).toString('utf8');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerEnd + 4);
    if (next < 0) throw malformed('a part has no closing boundary');
    const disposition = /^content-disposition:\s*form-data\s*;(.*)$/im.exec(headers)?.[1] ?? '';
    const name = /(?:^|;)\s*name="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) throw malformed('a part has no form-data name');
    const filename = /(?:^|;)\s*filename="([^"]*)"/i.exec(disposition)?.[1] ?? null;
    parts.push({ name, filename, data: body.subarray(headerEnd + 4, next) });
    at = next + 2;
  }
}

/** `parts` as a `multipart/form-data` body (the inverse of parseMultipart), with its Content-Type. */
export function encodeMultipart(parts: readonly FormPart[]): { contentType: string; bytes: Buffer } {
  const boundary = `weir-${randomUUID()}`;
  const quoted = (value: string) => value.replace(/["\r\n]/g, '_');
  const chunks = parts.flatMap((part) => [
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(part.name)}"${
        part.filename === null ? '' : `; filename="${quoted(part.filename)}"\r\nContent-Type: application/octet-stream`
      }\r\n\r\n`,
    ),
    part.data,
    Buffer.from('\r\n'),
  ]);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    bytes: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]),
  };
}

/** The logo's type, or a 400 naming `field`: empty, too large, or not one of the four image types by its bytes. */
function checkLogo(bytes: Buffer, field = 'brandLogo'): ImageType {
  if (bytes.length === 0) throw new ValidationError(field, 'is an empty file');
  if (bytes.length > MAX_LOGO_BYTES)
    throw new ValidationError(field, `is ${bytes.length} bytes; a logo may be at most ${MAX_LOGO_BYTES} bytes`);
  const contentType = sniffImage(bytes);
  if (!contentType)
    throw new ValidationError(field, 'must be a PNG, JPEG, WebP or GIF image', 'unsupported_image_type');
  return contentType;
}

/**
 * Uploaded brand logos, kept in the event log (one stream per logo, named by the hash of its
 * organization and bytes, so the same upload twice is one logo) and served publicly from
 * `/assets/logos/<hash>`: a logo is public by nature, so it is not sealed.
 */
export function createBrandLogoStore(deps: { eventStore: EventStore; clock: Clock; publicUrl: string }) {
  return {
    check: checkLogo,
    /** Stores the image (checked by its bytes) and answers its public URL. */
    async save(tenant: Tenant, bytes: Buffer, field = 'brandLogo'): Promise<string> {
      const contentType = checkLogo(bytes, field);
      const key = createHash('sha256')
        .update(`${tenant.organizationId}\n${tenant.environment}\n`)
        .update(bytes)
        .digest('hex');
      const streamId = `${STREAM_PREFIX}${key}`;
      if ((await deps.eventStore.readStream(streamId)).length === 0) {
        await deps.eventStore.append(
          streamId,
          [
            {
              id: randomUUID(),
              type: 'BrandLogoUploaded',
              data: { contentType, base64: bytes.toString('base64'), bytes: bytes.length },
              metadata: {
                organizationId: tenant.organizationId,
                environment: tenant.environment,
                actor: tenant.actor,
                ...(tenant.clientAddress ? { clientAddress: tenant.clientAddress } : {}),
                correlationId: randomUUID(),
                occurredAt: new Date(deps.clock.now()).toISOString(),
              },
            },
          ],
          'any',
        );
      }
      return `${deps.publicUrl}/assets/logos/${key}`;
    },

    /** Serves `/assets/logos/<hash>` with the sniffed type, never sniffable as anything else; false when the path is not a logo's. */
    async serve(ctx: Koa.Context): Promise<boolean> {
      const key = LOGO_PATH.exec(ctx.path)?.[1];
      if (!key || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return false;
      const [event] = await deps.eventStore.readStream(`${STREAM_PREFIX}${key}`);
      if (!event) return false;
      const data = event.data as { contentType: ImageType; base64: string };
      ctx.set('Content-Type', data.contentType);
      ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.set('Content-Disposition', 'inline');
      ctx.body = Buffer.from(data.base64, 'base64');
      return true;
    },
  };
}

export type BrandLogoStore = ReturnType<typeof createBrandLogoStore>;
