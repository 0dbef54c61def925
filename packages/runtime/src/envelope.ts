import { z } from 'zod';
import { PermanentError } from './errors';

/**
 * What the outbox, the relay and the consumer pipeline carry. They read the
 * envelope only; the payload belongs to the domain that produced the event.
 *
 * - `eventId`: assigned by the producer, deterministic for a given state change,
 *   and the only dedupe key consumers trust (an SQS messageId changes on every
 *   resend). It is also the FIFO deduplication id.
 * - `type`: what happened; a consumer takes the types its spec lists, and the
 *   relay routes by it (the consumer list's `eventTypes`).
 * - `entityId`: the thing it happened to; the FIFO message group (unless its consumer orders by
 *   `orderingKey`), so one entity's events are delivered in order, and what `version` is counted on.
 * - `version`: the order of one entity's events (1, 2, ...); a consumer that
 *   has applied version n ignores an older one arriving late.
 * - `occurredAt`: when the producer made the change (ISO 8601 with its offset); the dedupe horizon
 *   is counted from it, and an event further ahead of the consumer's clock than the skew margin
 *   is refused (OccurredInFuture).
 * - `tenant`: who the producer verified the change was made for (e.g. the caller the API
 *   authenticated). Part of the inbox key and of the message body the fingerprint is of, so one tenant's event can never
 *   stand for another's. Optional: an event without one is keyed as before.
 * - `orderingKey`: the FIFO message group for a consumer whose spec orders by it
 *   (`orderBy: 'ordering-key'`), when events of several entities must be delivered in one order (all
 *   payments of one account). Optional: a consumer ordered by entity ignores it, and an event without
 *   one is grouped by its `entityId`. `version` stays the entity's: never make the ordering key the
 *   `entityId` to get the group, or the generic effect judges one entity's version against another's.
 * - `traceparent`: the W3C Trace Context of the span that wrote the event to the outbox
 *   (packages/runtime/src/trace), so the relay, the consumer and the provider call join the trace
 *   the API call began. Optional (an event without one starts a trace at the relay), never part of
 *   the fingerprint, and an unreadable one is dropped, never a reason to refuse the event.
 *
 * @example A consumer's effect takes the envelope with whatever payload its producer wrote
 * ```ts
 * import { applyEntityEffect, type ApplyOutcome, type EntityEffectDeps, type EventEnvelope, type RecordWork } from '@exactly-once/runtime';
 *
 * export function applyAuditEffect(event: EventEnvelope, deps: EntityEffectDeps, work: RecordWork): Promise<ApplyOutcome> {
 *   return applyEntityEffect(event, deps, work);
 * }
 * ```
 */
export interface EventEnvelope<Type extends string = string, Payload = unknown> {
  eventId: string;
  type: Type;
  entityId: string;
  version: number;
  occurredAt: string;
  tenant?: string;
  orderingKey?: string;
  traceparent?: string;
  payload: Payload;
}

/**
 * The envelope's own schema; a domain extends it with a literal `type` and its payload's schema.
 *
 * @example A domain's event schema
 * ```ts
 * import { z } from 'zod';
 * import { envelopeSchema } from '@exactly-once/runtime';
 *
 * const orderPlacedSchema = envelopeSchema.extend({
 *   type: z.literal('OrderPlaced'),
 *   version: z.literal(1),
 *   payload: z.object({ customerId: z.string().min(1), totalCents: z.int().min(0) }),
 * });
 * ```
 */
export const envelopeSchema = z.object({
  eventId: z.string().min(1),
  type: z.string().min(1),
  entityId: z.string().min(1),
  version: z.int().min(1),
  occurredAt: z.iso.datetime({ offset: true }),
  tenant: z.string().min(1).optional(),
  orderingKey: z.string().min(1).optional(),
  // Observability only: a value that is not a string is dropped, never fails the event.
  traceparent: z.string().optional().catch(undefined),
  payload: z.unknown(),
});

/**
 * A message body as JSON, or a PermanentError: a body that is not JSON can
 * never succeed however often it is retried.
 *
 * @example A consumer's `parse`: JSON first, then the domain's schema
 * ```ts
 * import { parseJsonBody, parseWith } from '@exactly-once/runtime';
 *
 * export function parseOrderEvent(body: string): OrderEvent {
 *   return parseWith(orderEventSchema, parseJsonBody(body), 'an order event');
 * }
 * ```
 */
export function parseJsonBody(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw new PermanentError('SchemaViolation', 'Message body is not JSON');
  }
}

/**
 * Parses with `schema`, or throws a PermanentError naming every field that is wrong.
 * `what` names the expected thing in that message.
 *
 * @example
 * ```ts
 * import { parseJsonBody, parseWith } from '@exactly-once/runtime';
 *
 * export function parseOrderEvent(body: string): OrderEvent {
 *   return parseWith(orderEventSchema, parseJsonBody(body), 'an order event');
 * }
 * ```
 */
export function parseWith<T>(schema: z.ZodType<T>, json: unknown, what: string): T {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
    throw new PermanentError('SchemaViolation', `Message body is not ${what}: ${where}`);
  }
  return parsed.data;
}

/**
 * A message body as an envelope with any payload: what a generic consumer reads before its own schema.
 *
 * @example The `parse` of a consumer made by `npm run new:consumer`
 * ```ts
 * import { applyEntityEffect, parseEnvelope, queueConsumerHandler } from '@exactly-once/runtime';
 *
 * return queueConsumerHandler(wiring, {
 *   fifo: SPEC.fifo,
 *   parse: parseEnvelope,
 *   apply: (event, _record, work) =>
 *     applyEntityEffect(event, { consumer: SPEC.name, eventTypes: SPEC.eventTypes, ledger, provider }, work),
 * });
 * ```
 */
export function parseEnvelope(body: string): EventEnvelope {
  return parseWith(envelopeSchema, parseJsonBody(body), 'an event envelope') as EventEnvelope;
}
