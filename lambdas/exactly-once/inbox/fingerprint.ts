import { createHash } from 'node:crypto';
import { canonicalJson } from '../runtime/canonical-json';
import type { EventEnvelope } from '../envelope';

/**
 * What makes an event that event, as a short hash stored on its inbox claim: its type, entity,
 * version, tenant and payload (canonical JSON, so key order does not count). Not `occurredAt`,
 * which the DLQ tool rewrites on a redrive past the horizon, and not `eventId`, which is the key
 * the fingerprint is checked under.
 *
 * A failed claim whose stored fingerprint equals the delivered one is a duplicate; one that
 * differs is another event under a reused or forged id (EventIdReused), never "already done".
 *
 * @example
 * ```ts
 * import { eventFingerprint } from '../../lambdas/exactly-once/inbox/fingerprint';
 *
 * eventFingerprint(event) === eventFingerprint({ ...event, occurredAt: new Date().toISOString() }); // true
 * ```
 */
export function eventFingerprint(event: EventEnvelope): string {
  const identity = {
    type: event.type,
    entityId: event.entityId,
    version: event.version,
    payload: event.payload,
    ...(event.tenant === undefined ? {} : { tenant: event.tenant }),
  };
  // 128 bits of SHA-256: 32 hex characters a claim, enough that no two events of one consumer collide.
  return createHash('sha256').update(canonicalJson(identity)).digest('hex').slice(0, 32);
}
