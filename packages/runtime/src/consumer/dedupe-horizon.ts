/**
 * The dedupe horizon: how old an event may be and still be applied by a
 * consumer on its own.
 *
 * An inbox claim lives a fixed time (its TTL), but an SQS message does not:
 * every DLQ copy and every redrive is a new message with fresh retention, so
 * one event can circulate for as long as people keep redriving it. Once its
 * claim has expired, the next delivery would claim it again and apply the
 * effect a second time. So a consumer refuses, with the cause
 * `DedupeHorizonPassed`, any event whose producer-set `occurredAt` is older
 * than the horizon, and the claim TTL and the horizon are derived together
 * here, so they cannot drift apart.
 *
 * Why the horizon is safe: a claim is written after its event occurred, and
 * DynamoDB TTL deletes late (up to days), never early, so the claim of an
 * event that occurred at `t` exists until at least `t + claimTtl`. A consumer
 * applies only while `now - t < horizon = claimTtl - margin`, so it always
 * finds the claim if there is one. The margin covers clock skew between the
 * producer's clock (which set `occurredAt`) and the consumer's.
 *
 * An event stamped ahead of the consumer's clock would break that argument if its
 * claim counted from claim time: applied at `c < t`, its claim could expire at
 * `c + claimTtl` while a copy delivered before `t + horizon` still had to find it.
 * So a claim expires `claimTtl` after the later of claim time and `occurredAt`
 * (aws/inbox-table.ts claimExpiresAt), and a consumer refuses (OccurredInFuture)
 * an event more than MAX_FUTURE_SKEW_SECONDS ahead of its clock: a producer's
 * clock that far off is a fault to look at, and a far-future stamp would keep
 * its claim, and the horizon's promise, for an unbounded time.
 */

/**
 * How far ahead of a consumer's clock an event's `occurredAt` may be and still be applied: 5 minutes,
 * the skew SigV4 itself tolerates between a client and AWS. Producers here run on AWS's NTP-synced
 * clocks; an event further ahead is refused with OccurredInFuture.
 */
export const MAX_FUTURE_SKEW_SECONDS = 300;

/** Clock skew the horizon allows between the producer's clock and a consumer's: 1 day, far beyond NTP drift. */
export const DEDUPE_HORIZON_MARGIN_SECONDS = 86_400;

export interface DedupeWindow {
  /** How long an inbox claim (and every record written beside it) is kept: its TTL. */
  claimTtlSeconds: number;
  /** The oldest an event may be for a consumer to apply it by itself: claim TTL minus the margin. */
  horizonSeconds: number;
}

/**
 * The claim TTL and horizon of a consumer, from its queues: a first trip
 * (source retention, then DLQ retention, then one redrive within the allowance)
 * stays inside the horizon; anything older needs a person (the DLQ tool's
 * `--past-horizon`, after checking the effect by hand).
 */
export function dedupeWindow(props: {
  sourceRetentionSeconds: number;
  deadLetterRetentionSeconds: number;
  redriveAllowanceSeconds: number;
}): DedupeWindow {
  const horizonSeconds =
    props.sourceRetentionSeconds + props.deadLetterRetentionSeconds + props.redriveAllowanceSeconds;
  if (!Number.isInteger(horizonSeconds) || horizonSeconds <= 0)
    throw new Error(`A dedupe horizon must be a positive whole number of seconds, got ${horizonSeconds}`);
  return { horizonSeconds, claimTtlSeconds: horizonSeconds + DEDUPE_HORIZON_MARGIN_SECONDS };
}

/** The largest horizon a claim TTL keeps safe. */
export const maxHorizonForClaimTtl = (claimTtlSeconds: number): number =>
  claimTtlSeconds - DEDUPE_HORIZON_MARGIN_SECONDS;

/** Seconds since `occurredAt` (negative if it is ahead of `now`), or undefined when it is not a timestamp. */
export function eventAgeSeconds(occurredAt: string, now: Date): number | undefined {
  const at = Date.parse(occurredAt);
  return Number.isNaN(at) ? undefined : (now.getTime() - at) / 1000;
}

/** Whether an event that occurred at `occurredAt` is past a horizon of `horizonSeconds` at `now`. */
export function isPastHorizon(occurredAt: string, now: Date, horizonSeconds: number): boolean {
  const age = eventAgeSeconds(occurredAt, now);
  return age !== undefined && age > horizonSeconds;
}
