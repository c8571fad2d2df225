import { generateKeyPairSync, randomBytes } from 'node:crypto';

/** The keys every instance sharing one log must be given alike (a data dir's own would differ). */
export function sharedInstanceKeys(): { WEIR_MASTER_KEY: string; WEIR_AUDIT_KEY: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  return {
    WEIR_MASTER_KEY: randomBytes(32).toString('base64'),
    WEIR_AUDIT_KEY: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}
