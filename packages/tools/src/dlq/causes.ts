import type { PermanentCause } from '@exactly-once/runtime/errors';
import { envelopeOccurredAt } from './horizon';

/**
 * Why a message is in a dead-letter queue, in the words every tool uses: the DLQ tool (counting,
 * filtering, what it leaves), the proof kit and the simulation (what a run expects there). A consumer
 * writes the cause as the message attribute `failureCause` (packages/runtime/src/errors.ts
 * `PermanentCause`); a message SQS moved after maxReceiveCount carries none.
 */

/** Poison: a body that is not one of the example's events (`isEvent`). It fails the same way however often it is redriven. */
export const POISON_CAUSE: PermanentCause = 'SchemaViolation';
/** Another event under an eventId a consumer already claimed: for a person, never moved by a plain redrive. */
export const EVENT_ID_REUSED_CAUSE: PermanentCause = 'EventIdReused';
/** An event stamped further ahead than the consumer's clock-skew margin (consume-record.ts). */
export const OCCURRED_IN_FUTURE_CAUSE: PermanentCause = 'OccurredInFuture';
/** A provider call owed for longer than the provider remembers idempotency keys (provider-window.ts). */
export const PROVIDER_KEY_WINDOW_CAUSE: PermanentCause = 'ProviderKeyWindowPassed';
/** An event older than the consumer's dedupe horizon (horizon.ts). */
export const DEDUPE_HORIZON_PASSED_CAUSE: PermanentCause = 'DedupeHorizonPassed';
/** SQS moved it after maxReceiveCount: the consumer never got to write a cause. */
export const RETRIES_EXHAUSTED = 'RetriesExhausted';

/**
 * Causes stored under an earlier name, by their name now: a message dead-lettered before a rename
 * keeps the old value in its attribute, and the tools count, filter and show it by the new one.
 */
export const RENAMED_CAUSES: Readonly<Record<string, string>> = { UnknownEntity: 'UnsupportedEventType' };

/** A cause by its name now (`--cause UnknownEntity` selects `UnsupportedEventType`, as before the rename). */
export const currentCauseName = (cause: string): string => RENAMED_CAUSES[cause] ?? cause;

/** What the cause and poison tests read of a dead-lettered message: its body and its message attributes. */
export interface DeadLetterFacts {
  body: string;
  /** The message attributes as strings (`failureCause` among them when a consumer dead-lettered it). */
  attributes: Readonly<Record<string, string | undefined>>;
}

/**
 * A dead-lettered message's cause by its name now; {@link RETRIES_EXHAUSTED} when it carries none.
 *
 * @example
 * ```ts
 * causeOf({ body: '{}', attributes: { failureCause: 'UnknownEntity' } }); // 'UnsupportedEventType'
 * causeOf({ body: '{}', attributes: {} }); // 'RetriesExhausted'
 * ```
 */
export function causeOf(message: Pick<DeadLetterFacts, 'attributes'>): string {
  return currentCauseName(message.attributes.failureCause ?? RETRIES_EXHAUSTED);
}

/**
 * Poison by its cause, or (moved by SQS with no cause) by a body that is not an event (`isEvent`, the
 * domain's) or whose occurredAt is no timestamp: the consumer refuses both as
 * SchemaViolation, on every redrive.
 *
 * @example
 * ```ts
 * isPoison({ body: '{"poison":true}', attributes: { failureCause: 'SchemaViolation' } }, domain.isEvent); // true
 * isPoison({ body: eventBody, attributes: { failureCause: 'EventIdReused' } }, domain.isEvent); // false
 * ```
 */
export function isPoison(message: DeadLetterFacts, isEvent: (body: string) => boolean): boolean {
  const cause = message.attributes.failureCause;
  if (cause !== undefined) return cause === POISON_CAUSE;
  if (!isEvent(message.body)) return true;
  return envelopeOccurredAt(message.body) === undefined;
}

/**
 * The poison body the proof kit and the simulation send on purpose: a JSON object with `poison: true`
 * first, then `fields` (a run id, a number, a note), so no consumer can read it as an event.
 *
 * @example
 * ```ts
 * poisonBody({ runId: 'r1', n: 0 }); // '{"poison":true,"runId":"r1","n":0}'
 * ```
 */
export function poisonBody(fields: Readonly<Record<string, unknown>>): string {
  return JSON.stringify({ poison: true, ...fields });
}

/**
 * Whether a body is poison a tool sent on purpose ({@link poisonBody}), and, given a run id, that
 * run's: a run judges only its own poison as expected in a DLQ.
 *
 * @example
 * ```ts
 * isSentPoison(poisonBody({ runId: 'r1', n: 0 }), 'r1'); // true
 * isSentPoison(poisonBody({ runId: 'r0', n: 0 }), 'r1'); // false: an earlier run's
 * ```
 */
export function isSentPoison(body: string, runId?: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed as { poison?: unknown }).poison !== true) return false;
  return runId === undefined || (parsed as { runId?: unknown }).runId === runId;
}
