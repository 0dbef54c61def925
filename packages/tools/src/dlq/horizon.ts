import { eventAgeSeconds, isPastHorizon } from '@exactly-once/runtime/consumer/dedupe-horizon';

/**
 * A consumer DLQ message against its consumer's dedupe horizon
 * (packages/runtime/src/consumer/dedupe-horizon.ts): the consumer refuses, with the cause
 * DedupeHorizonPassed, an event whose envelope `occurredAt` is older than the
 * horizon, because its inbox claim may be gone. The tool judges the same way,
 * with the same function, so `show` says what the consumer will do with a
 * message and `redrive` leaves behind what it would only refuse again.
 *
 * Past the horizon, only a person can tell whether the effect was applied
 * (docs/runbook.md, PAST_HORIZON_RUNBOOK). If it was not, `redrive
 * --past-horizon <eventId>` resends the event with `occurredAt` set to now and
 * the original kept in the message attribute `originalOccurredAt`: the consumer
 * applies it once and claims it afresh, and that claim outlives the new
 * horizon like any other. The original body is never resent: the consumer would
 * refuse it at once.
 */
export const PAST_HORIZON_RUNBOOK = 'docs/runbook.md#a-message-past-the-dedupe-horizon-dedupehorizonpassed';

/** The message attribute a rewritten copy carries its envelope's original `occurredAt` in. */
export const ORIGINAL_OCCURRED_AT = 'originalOccurredAt';

export interface HorizonJudgement {
  /** The envelope's `occurredAt` as the body has it; undefined when the body has no readable one. */
  occurredAt?: string;
  /** Whole seconds since `occurredAt` on the tool's clock (negative when ahead of it); undefined when unknown. */
  ageSeconds?: number;
  /** The consumer's horizon (its stack output `<Consumer>DedupeHorizonSeconds`); undefined when the stack has none. */
  dedupeHorizonSeconds?: number;
  /**
   * past: the consumer refuses it (DedupeHorizonPassed); within: the consumer judges it by its inbox;
   * unknown: no readable `occurredAt` (poison: the consumer refuses it as SchemaViolation) or no horizon.
   */
  horizon: 'past' | 'within' | 'unknown';
}

/** The envelope's `occurredAt` if the body is a JSON object whose `occurredAt` is a timestamp. */
export function envelopeOccurredAt(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const occurredAt = (parsed as { occurredAt?: unknown }).occurredAt;
  // Readable as the consumer reads it (packages/runtime/src/consumer/consume-record.ts): Date.parse.
  return typeof occurredAt === 'string' && !Number.isNaN(Date.parse(occurredAt)) ? occurredAt : undefined;
}

export function judgeHorizon(body: string, dedupeHorizonSeconds: number | undefined, now: Date): HorizonJudgement {
  const occurredAt = envelopeOccurredAt(body);
  if (occurredAt === undefined) return { dedupeHorizonSeconds, horizon: 'unknown' };
  const ageSeconds = Math.round(eventAgeSeconds(occurredAt, now)!);
  const horizon =
    dedupeHorizonSeconds === undefined
      ? 'unknown'
      : isPastHorizon(occurredAt, now, dedupeHorizonSeconds)
        ? 'past'
        : 'within';
  return { occurredAt, ageSeconds, dedupeHorizonSeconds, horizon };
}

/**
 * The body with the envelope's `occurredAt` replaced by `now`, everything else
 * as it was (JSON keeps its key order), and the original value. Only for a body
 * whose `occurredAt` is readable (a judged 'past' message).
 */
export function withFreshOccurredAt(body: string, now: Date): { body: string; originalOccurredAt: string } {
  const originalOccurredAt = envelopeOccurredAt(body);
  if (originalOccurredAt === undefined) throw new Error('The body has no readable occurredAt to replace');
  const envelope = JSON.parse(body) as Record<string, unknown>;
  return { body: JSON.stringify({ ...envelope, occurredAt: now.toISOString() }), originalOccurredAt };
}

/** Seconds as days with one decimal: `61.2 d`; a whole number of days without one: `21 d`. */
export function days(seconds: number): string {
  const value = seconds / 86_400;
  return `${Number.isInteger(value) ? value : value.toFixed(1)} d`;
}

/** `show`'s line for a consumer DLQ message. */
export function describeHorizon(judgement: HorizonJudgement): string {
  const { occurredAt, ageSeconds, dedupeHorizonSeconds: horizon } = judgement;
  if (occurredAt === undefined || ageSeconds === undefined)
    return 'occurredAt unknown, age unknown (no readable occurredAt: the consumer refuses it as SchemaViolation)';
  const age = `age ${(ageSeconds / 86_400).toFixed(1)} d`;
  if (horizon === undefined) return `occurredAt ${occurredAt}, ${age} (the stack outputs no dedupe horizon for it)`;
  if (judgement.horizon === 'past')
    return `occurredAt ${occurredAt}, ${age}, PAST the ${days(horizon)} dedupe horizon (see ${PAST_HORIZON_RUNBOOK})`;
  return `occurredAt ${occurredAt}, ${age} of ${days(horizon)} horizon`;
}
