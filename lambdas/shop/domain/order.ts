import { createHash } from 'node:crypto';
import { z } from 'zod';

/** Limits from the public API contract (docs/http-api.md). */
export const MAX_ITEMS = 50;
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Customer ids and SKUs: 1-64 of ASCII letters, digits and `._:-`. Every one
 * of these can be carried in an SQS message body, a DynamoDB key and a URL
 * path segment; a wider set let in characters SQS refuses (U+FFFE, U+FFFF),
 * so an order was accepted whose event could never be published. The length
 * is a separate rule so that each failure gets one clear message.
 */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9._:-]*$/;
export const MAX_IDENTIFIER_LENGTH = 64;
/** The identifier rule as the read routes check a path parameter by it (the same ids an order accepts). */
export const IDENTIFIER_RULE = {
  maxLength: MAX_IDENTIFIER_LENGTH,
  allowed: { pattern: IDENTIFIER_PATTERN, description: 'ASCII letters, digits and . _ : -' },
} as const;
const identifierSchema = z
  .string()
  .min(1)
  .max(MAX_IDENTIFIER_LENGTH)
  .regex(IDENTIFIER_PATTERN, { message: 'Only ASCII letters, digits and . _ : - are allowed.' });

/**
 * An order line as events carry it. Deliberately as lenient as it was when
 * events already in flight were written: consumers must still read them.
 */
export const orderLineSchema = z.strictObject({
  sku: z.string().min(1).max(64),
  quantity: z.int().min(1).max(1_000_000),
  unitPriceCents: z.int().min(0).max(100_000_000),
});

/** An order line as the API accepts it: the SKU is an identifier. */
const requestedOrderLineSchema = orderLineSchema.extend({ sku: identifierSchema });

export const placeOrderRequestSchema = z.strictObject({
  customerId: identifierSchema,
  items: z.array(requestedOrderLineSchema).min(1).max(MAX_ITEMS),
});

export type OrderLine = z.infer<typeof orderLineSchema>;
export type PlaceOrderRequest = z.infer<typeof placeOrderRequestSchema>;

export type OrderStatus = 'PLACED' | 'CANCELLED';

/** The order as the API shows it. */
export interface OrderView {
  orderId: string;
  status: OrderStatus;
  customerId: string;
  items: OrderLine[];
  totalCents: number;
  createdAt: string;
  cancelledAt?: string;
}

export interface FieldError {
  field: string;
  message: string;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** Parses and validates a raw request body. Never throws. */
export function parsePlaceOrderBody(body: string | null | undefined): ValidationResult<PlaceOrderRequest> {
  if (body === null || body === undefined || body.length === 0) {
    return { ok: false, errors: [{ field: '(body)', message: 'A JSON body is required.' }] };
  }
  if (Buffer.byteLength(body, 'utf8') > MAX_BODY_BYTES) {
    return { ok: false, errors: [{ field: '(body)', message: `The body must be at most ${MAX_BODY_BYTES} bytes.` }] };
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, errors: [{ field: '(body)', message: 'The body is not valid JSON.' }] };
  }
  const parsed = placeOrderRequestSchema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues.map((issue) => ({
        field: issue.path.length > 0 ? issue.path.join('.') : '(body)',
        message: issue.message,
      })),
    };
  }
  return { ok: true, value: parsed.data };
}

export function orderTotalCents(items: readonly OrderLine[]): number {
  return items.reduce((sum, line) => sum + line.quantity * line.unitPriceCents, 0);
}

/** Loyalty points for an order: one point per whole currency unit (docs/proof-kit.md). */
export function loyaltyPoints(totalCents: number): number {
  return Math.floor(totalCents / 100);
}

/**
 * The order id is a pure function of (caller, idempotency key). Even if the
 * idempotency record is lost or its lock expires mid-flight, a retry computes
 * the same id and the conditional order write refuses a second order.
 */
export function deriveOrderId(caller: string, idempotencyKey: string): string {
  const digest = createHash('sha256').update(caller).update('\u0000').update(idempotencyKey).digest('hex');
  return `ord_${digest.slice(0, 32)}`;
}

/** Event ids are deterministic too, so a retried transaction cannot mint a second event. */
export function orderPlacedEventId(orderId: string): string {
  return `${orderId}.placed`;
}

export function orderCancelledEventId(orderId: string): string {
  return `${orderId}.cancelled`;
}
