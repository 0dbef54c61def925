import { PermanentError } from './errors';
import { parseOrderEvent, type OrderEvent } from './events';

/**
 * Whether an outbox item's event can be published at all: it must be one of
 * our events, and every part SQS sees must be something SQS accepts. An item
 * that fails either check fails the same way on every attempt, so a
 * publisher skips it (and says so) instead of retrying it forever.
 */
export type OutboxEventCheck = { ok: true; event: OrderEvent } | { ok: false; reason: string };

// The characters SQS allows in a message body or string attribute (XML 1.0's Char production).
const SQS_BODY_CHARACTERS = /^[\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;
// Message group and deduplication ids: 1-128 printable ASCII characters.
const SQS_FIFO_ID = /^[\x21-\x7e]{1,128}$/;

export function checkOutboxEvent(raw: unknown): OutboxEventCheck {
  if (raw === undefined || raw === null) return { ok: false, reason: 'The outbox item has no event.' };
  let event: OrderEvent;
  const body = JSON.stringify(raw);
  try {
    event = parseOrderEvent(body);
  } catch (error) {
    if (error instanceof PermanentError) return { ok: false, reason: error.message };
    throw error;
  }
  if (!SQS_BODY_CHARACTERS.test(body)) {
    return { ok: false, reason: 'The event holds characters SQS refuses in a message body (e.g. U+FFFE, U+FFFF).' };
  }
  if (!SQS_FIFO_ID.test(event.orderId) || !SQS_FIFO_ID.test(event.eventId)) {
    return {
      ok: false,
      reason: 'orderId and eventId must be 1-128 printable ASCII characters (FIFO group and dedup ids).',
    };
  }
  // Publish exactly what was stored: parsing drops fields it does not know, and consumers may.
  return { ok: true, event: raw as OrderEvent };
}
