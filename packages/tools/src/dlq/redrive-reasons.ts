import { MAX_FUTURE_SKEW_SECONDS } from '@exactly-once/runtime/consumer/dedupe-horizon';
import { fingerprintVersionOf } from '@exactly-once/runtime/inbox/fingerprint';
import { days, PAST_HORIZON_RUNBOOK } from './horizon';
import type { DeadLetter } from './dead-letter';

/**
 * Why redrive leaves a message in its DLQ, in the words a person reads (`redrive` lists each skipped
 * message with its reason), and how it judges an EventIdReused copy: each would only be refused again.
 */

/** Why a message past the horizon stays: it would only be refused again, and only a person can say more. */
export function pastHorizonReason(dedupeHorizonSeconds: number): string {
  return (
    `past the ${days(dedupeHorizonSeconds)} dedupe horizon: the consumer would refuse it (DedupeHorizonPassed). ` +
    `Check by hand whether its effect was applied (${PAST_HORIZON_RUNBOOK}); ` +
    `only if it was NOT, redrive it with --past-horizon <eventId>`
  );
}

const EVENT_ID_REUSED_REASON =
  'another event under a used eventId (EventIdReused): it would be refused again; compare storedFingerprint and ' +
  'deliveredFingerprint and the two bodies (show), never apply an effect by hand: it may already be applied (runbook)';

const JUDGED_BY_PARSE_REASON =
  "EventIdReused judged by code that fingerprinted the consumer's parse (no v2: prefix): a schema change alone could " +
  'make it; compare the body with the event its producer wrote (show, the outbox item) and, if only occurredAt and ' +
  'traceparent differ, redrive it with --cause EventIdReused; never apply an effect by hand (runbook)';

/** The versions of an EventIdReused copy's two fingerprints, when it carries both. */
function fingerprintVersions(message: DeadLetter): [string, string] | undefined {
  const { storedFingerprint, deliveredFingerprint } = message.attributes;
  if (storedFingerprint === undefined || deliveredFingerprint === undefined) return undefined;
  return [fingerprintVersionOf(storedFingerprint), fingerprintVersionOf(deliveredFingerprint)];
}

/**
 * An EventIdReused copy, by its fingerprints' versions:
 * - two versions (code that fingerprinted another way wrote the claim or judged the copy: a deploy or
 *   a rollback): they say nothing about its content, and the code now running takes a claim of another
 *   version as the same event, so it is moved: a duplicate, whose owed provider call is made once;
 * - both v1 (the code before versions hashed the consumer's parse, so a schema change alone could make
 *   it): moved only when a person names the cause (--cause EventIdReused) after comparing the bodies;
 * - both of this version: two bodies that differ, another event for a person; never moved.
 */
export function reusedIdDecision(message: DeadLetter, causeNamed: boolean): { skip: string } | { move: 'as-is' } {
  const versions = fingerprintVersions(message);
  if (versions !== undefined && versions[0] !== versions[1]) return { move: 'as-is' };
  if (versions?.[0] === 'v1') return causeNamed ? { move: 'as-is' } : { skip: JUDGED_BY_PARSE_REASON };
  return { skip: EVENT_ID_REUSED_REASON };
}

/** Why an event refused as stamped in the future stays while its stamp is still beyond the margin. */
export function stillInFutureReason(occurredAt: string): string {
  return (
    `stamped ${occurredAt}, still more than ${MAX_FUTURE_SKEW_SECONDS} s ahead (OccurredInFuture): it would be refused ` +
    "again; fix its producer's clock, then redrive it once the stamp is within the margin (runbook)"
  );
}
