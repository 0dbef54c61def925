import { createHash } from 'node:crypto';
import { canonicalJson } from '../runtime/canonical-json';
import type { EventEnvelope } from '../envelope';

/**
 * The version of the fingerprints this code writes, the prefix of each (`v2:<32 hex>`). A stored
 * fingerprint of another version (the unprefixed v1, which hashed a consumer's parse) is never
 * compared: it is taken as the same event, as an entry without a fingerprint is.
 *
 * @example
 * ```ts
 * eventFingerprint(event).startsWith(`${FINGERPRINT_VERSION}:`); // true
 * ```
 */
export const FINGERPRINT_VERSION = 'v2';

/**
 * The envelope fields left out of a fingerprint: those a relay, a sweeper or an operator's tool may
 * rewrite on a copy of the same event. `occurredAt`: the DLQ tool's redrive past the horizon sets it
 * to now, and a skewed producer clock is what the relay's clock-skew fault models; `traceparent`:
 * trace context, observability only, which a tool may refresh.
 *
 * @example
 * ```ts
 * REWRITABLE_ENVELOPE_FIELDS.includes('occurredAt'); // true
 * ```
 */
export const REWRITABLE_ENVELOPE_FIELDS: readonly string[] = ['occurredAt', 'traceparent'];

/**
 * What makes an event that event, as a short versioned hash stored on its inbox claim: what its
 * producer SENT (the message body, or the envelope the producer wrote), in canonical JSON (so key
 * order and whitespace do not count), without {@link REWRITABLE_ENVELOPE_FIELDS}. Never a consumer's
 * parse of it: a deploy that adds a field, a default or a transform to the consumer's schema would
 * otherwise turn an honest retry of an event whose provider call is still owed into EventIdReused.
 *
 * A failed claim whose stored fingerprint equals the delivered one is a duplicate; one of this version
 * that differs is another event under a reused or forged id (EventIdReused), never "already done".
 *
 * @example The envelope as the producer wrote it and the body the relay sent give the same fingerprint
 * ```ts
 * sentFingerprint(event) === bodyFingerprint(JSON.stringify(event)); // true
 * sentFingerprint(event) === sentFingerprint({ ...event, occurredAt: new Date().toISOString() }); // true
 * ```
 */
export function sentFingerprint(sent: unknown): string {
  const identity =
    sent !== null && typeof sent === 'object' && !Array.isArray(sent)
      ? Object.fromEntries(Object.entries(sent).filter(([field]) => !REWRITABLE_ENVELOPE_FIELDS.includes(field)))
      : sent;
  // 128 bits of SHA-256: 32 hex characters a claim, enough that no two events of one consumer collide.
  return `${FINGERPRINT_VERSION}:${createHash('sha256').update(canonicalJson(identity)).digest('hex').slice(0, 32)}`;
}

/**
 * The fingerprint of a message body as it came off the queue: its JSON (a body that is not JSON, for
 * a consumer whose parse reads another format, as the string it is). consumeRecord computes it once
 * per record and carries it on the record's work, so the ledger's claim never depends on the parse.
 *
 * @example
 * ```ts
 * const work: RecordWork = { ...base, sentFingerprint: bodyFingerprint(record.body) };
 * ```
 */
export function bodyFingerprint(body: string): string {
  let sent: unknown;
  try {
    sent = JSON.parse(body);
  } catch {
    sent = body;
  }
  return sentFingerprint(sent);
}

/**
 * The fingerprint of an envelope as given (a ledger or use case called without a queue record: a
 * test, a script): the envelope is taken as what was sent. Equal to the fingerprint of the body the
 * relay sends for it, so the proof kit can check a claim against the event the outbox holds.
 *
 * @example
 * ```ts
 * import { eventFingerprint } from '@exactly-once/runtime/inbox/fingerprint';
 *
 * eventFingerprint(event) === eventFingerprint({ ...event, occurredAt: new Date().toISOString() }); // true
 * ```
 */
export function eventFingerprint(event: EventEnvelope): string {
  return sentFingerprint(event);
}

/**
 * Whether a stored fingerprint says "another event" against the delivered one: only a stored
 * fingerprint of this version that differs. None stored (a claim from before fingerprints, a
 * supersede mark) or one of an older version is taken as the same event.
 *
 * @example
 * ```ts
 * if (fingerprintsDiffer(entry.fingerprint, delivered)) throw new PermanentError('EventIdReused', '...');
 * ```
 */
export function fingerprintsDiffer(stored: unknown, delivered: string): boolean {
  if (typeof stored !== 'string' || !stored.startsWith(`${FINGERPRINT_VERSION}:`)) return false;
  return stored !== delivered;
}

/**
 * The version a stored or delivered fingerprint was computed under: its prefix (`v2`), or `v1` for
 * one without (the code before versions, which hashed the consumer's parse). Two fingerprints of
 * different versions say nothing about whether the events differ.
 *
 * @example The DLQ tool tells a copy judged across a code change from a real second event
 * ```ts
 * fingerprintVersionOf(attributes.storedFingerprint) !== fingerprintVersionOf(attributes.deliveredFingerprint);
 * ```
 */
export function fingerprintVersionOf(fingerprint: string): string {
  return /^(v\d+):/.exec(fingerprint)?.[1] ?? 'v1';
}
