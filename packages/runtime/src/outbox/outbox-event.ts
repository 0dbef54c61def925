import { PermanentError } from '../errors';
import { envelopeSchema, parseWith, type EventEnvelope } from '../envelope';

/**
 * Whether an outbox item's event can be published at all: it must be an
 * envelope, and every part SQS sees must be something SQS accepts. An item
 * that fails either check fails the same way on every attempt, so a
 * publisher skips it (and says so) instead of retrying it forever. The payload
 * is the producing domain's business: its consumers check it.
 */
export type OutboxEventCheck = { ok: true; event: EventEnvelope } | { ok: false; reason: string };

// The characters SQS allows in a message body or string attribute (XML 1.0's Char production).
const SQS_BODY_CHARACTERS = /^[\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;
// Message group and deduplication ids: 1-128 printable ASCII characters.
const SQS_FIFO_ID = /^[\x21-\x7e]{1,128}$/;

export function checkOutboxEvent(raw: unknown): OutboxEventCheck {
  if (raw === undefined || raw === null) return { ok: false, reason: 'The outbox item has no event.' };
  try {
    parseWith(envelopeSchema, raw, 'an event envelope');
  } catch (error) {
    if (error instanceof PermanentError) return { ok: false, reason: error.message };
    throw error;
  }
  // Publish exactly what was stored: parsing drops fields it does not know, and consumers may.
  const event = raw as EventEnvelope;
  if (!SQS_BODY_CHARACTERS.test(JSON.stringify(event))) {
    return { ok: false, reason: 'The event holds characters SQS refuses in a message body (e.g. U+FFFE, U+FFFF).' };
  }
  if (!SQS_FIFO_ID.test(event.entityId) || !SQS_FIFO_ID.test(event.eventId)) {
    return {
      ok: false,
      reason: 'entityId and eventId must be 1-128 printable ASCII characters (FIFO group and dedup ids).',
    };
  }
  // A FIFO group too, for a consumer ordered by it: refused here, not by SQS on every retry.
  if (event.orderingKey !== undefined && !SQS_FIFO_ID.test(event.orderingKey)) {
    return { ok: false, reason: 'orderingKey must be 1-128 printable ASCII characters (a FIFO group id).' };
  }
  return { ok: true, event };
}
