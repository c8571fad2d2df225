import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readOrCreateKeyFile } from '../tenancy/secrets.ts';
import { SettingError } from '../shared/setting-error.ts';

/** The operator's signing key in the data directory when none is given: PKCS#8 PEM, mode 0600. */
export const OPERATOR_KEY_FILE = 'audit-operator.key';

/** The ed25519 key that signs the chain's checkpoints; `publicKey` names it (see `publicKeyText`). */
export type OperatorKey = { publicKey: string; sign(message: string): string };

export class OperatorKeyError extends SettingError {
  override readonly name = 'OperatorKeyError';
}

/** A public key as checkpoints name it: its 32 raw bytes in base64url (the JWK `x`). */
export const publicKeyText = (key: KeyObject): string => {
  const { x } = key.export({ format: 'jwk' });
  if (typeof x !== 'string') throw new OperatorKeyError('not an ed25519 key');
  return x;
};

const privateKeyOf = (pem: string, where: string): KeyObject => {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new OperatorKeyError(`${where} does not hold a private key in PEM`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new OperatorKeyError(`${where} holds no ed25519 key`);
  return key;
};

const operatorKeyOf = (privateKey: KeyObject): OperatorKey => ({
  publicKey: publicKeyText(createPublicKey(privateKey)),
  sign: (message) => sign(null, Buffer.from(message, 'utf8'), privateKey).toString('base64url'),
});

const newKeyPem = (): string =>
  generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

/**
 * The operator key: the PEM given (`WEIR_AUDIT_KEY` / `--audit-key-file`), else the key file in the
 * data directory, made on first use like the master key.
 */
export function loadOperatorKey(options: { given?: string; keyFile: string }): OperatorKey {
  if (options.given) return operatorKeyOf(privateKeyOf(options.given, 'WEIR_AUDIT_KEY'));
  return operatorKeyOf(privateKeyOf(readOrCreateKeyFile(options.keyFile, newKeyPem), options.keyFile));
}

/** The operator's public key without making one: null when none is given and the key file does not exist. */
export function operatorPublicKey(options: { given?: string; keyFile: string }): string | null {
  if (options.given) return loadOperatorKey(options).publicKey;
  if (!existsSync(options.keyFile)) return null;
  return operatorKeyOf(privateKeyOf(readFileSync(options.keyFile, 'utf8'), options.keyFile)).publicKey;
}

/** Whether `signature` (base64url) is `publicKey`'s ed25519 signature of `message`; false for malformed input. */
export function signatureHolds(publicKey: string, message: string, signature: string): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
    return verify(null, Buffer.from(message, 'utf8'), key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

/** Whether `text` names an ed25519 public key as checkpoints do (the base64url of its 32 bytes). */
export function isPublicKeyText(text: string): boolean {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return false;
  try {
    createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: text }, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}
