import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Environment } from '../event-store/event-store.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A new secret API key: `sk_test_…` or `sk_live_…`, 40 random base62 characters (~238 bits). */
export const generateApiKey = (environment: Environment): string => `sk_${environment}_${randomBase62(40)}`;

/** The environment a key claims by its prefix, or null when it is not a Weir key. */
export function environmentOfKey(key: string): Environment | null {
  const match = /^sk_(test|live)_[0-9A-Za-z]{40}$/.exec(key);
  return match ? (match[1] as Environment) : null;
}

/** Keys are high-entropy random strings, so one SHA-256 is the right hash (no slow KDF needed). */
export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

export const secretsEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export const generateWebhookSecret = (): string => `whsec_${randomBase62(40)}`;

/** Encrypts secrets that must be read back (webhook signing secrets) with AES-256-GCM. */
export type SecretBox = { seal(plain: string): string; open(sealed: string): string };

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('the master key must be 32 bytes');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `v1.${iv.toString('base64url')}.${body.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
    },
    open(sealed) {
      const [version, iv, body, tag] = sealed.split('.');
      if (version !== 'v1' || !iv || !body || !tag) throw new Error('sealed secret has an unknown format');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * The master key: `WEIR_MASTER_KEY` (32 bytes, base64) when given, else a key file in the data
 * directory, created on first use with mode 0600.
 */
export function loadMasterKey(options: { masterKey?: string; keyFile: string }): Buffer {
  if (options.masterKey) {
    const key = Buffer.from(options.masterKey, 'base64');
    if (key.length !== 32) throw new Error('WEIR_MASTER_KEY must be 32 bytes encoded in base64');
    return key;
  }
  const key = Buffer.from(
    readOrCreateKeyFile(options.keyFile, () => randomBytes(32).toString('base64')).trim(),
    'base64',
  );
  if (key.length !== 32) throw new Error(`${options.keyFile} does not hold a 32-byte base64 key`);
  return key;
}

/**
 * The text of a key file in the data directory, written with `create()` (mode 0600) when it does
 * not exist yet; when two processes race, the first file written wins and both read it.
 */
export function readOrCreateKeyFile(keyFile: string, create: () => string): string {
  if (!existsSync(keyFile)) {
    mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
    try {
      writeFileSync(keyFile, create(), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  chmodSync(keyFile, 0o600);
  return readFileSync(keyFile, 'utf8');
}
