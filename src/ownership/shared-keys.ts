import { createHash, createHmac } from 'node:crypto';
import { SettingError } from '../shared/setting-error.ts';
import type { KvBucket } from './nats-kv.ts';

/** A key's fingerprint: names it without revealing it (an HMAC under the key itself). */
export const secretKeyFingerprint = (key: Buffer): string =>
  createHmac('sha256', key).update('weir key fingerprint').digest('hex').slice(0, 16);

/** A public key's fingerprint. */
export const publicKeyFingerprint = (publicKey: string): string =>
  createHash('sha256').update(publicKey).digest('hex').slice(0, 16);

/**
 * Instances that share one log must share its keys: a webhook secret sealed by one is opened by
 * whichever owns the dispatcher, and checkpoints are signed by whichever owns them. The first
 * instance records each key's fingerprint; one that starts with another key is refused at start,
 * naming the setting, instead of failing on the first secret it cannot open.
 */
export async function agreeOnKeys(
  bucket: KvBucket,
  keys: readonly { setting: string; fingerprint: string }[],
): Promise<void> {
  for (const { setting, fingerprint } of keys) {
    const name = `fingerprint.${setting}`;
    const recorded = await bucket.get(name);
    if (recorded === null && (await bucket.put(name, new TextEncoder().encode(fingerprint), 0)) !== null) continue;
    // Recorded by another instance (maybe a moment ago, as this one tried): it must be the same key.
    const theirs = new TextDecoder().decode(recorded?.value ?? (await bucket.get(name))!.value);
    if (theirs !== fingerprint)
      throw new SettingError(
        `${setting} differs from the one the other Weir instances on this NATS use (fingerprint ${fingerprint}, theirs ${theirs}): give every instance the same ${setting}`,
      );
  }
}
