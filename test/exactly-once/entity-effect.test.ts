import { z } from 'zod';
import { PermanentError } from '@exactly-once/runtime/errors';
import { parseWith, type EventEnvelope } from '@exactly-once/runtime/envelope';
import { applyEntityEffect, type EntityEffectDeps } from '@exactly-once/runtime/inbox/entity-effect';
import type { EntityEffectLedger, EventRef, LedgerResult } from '@exactly-once/runtime/inbox/ports';
import type { ExternalProvider } from '@exactly-once/runtime/provider/provider';

/**
 * The generic effect's provider request: the event's identity by default, or what the consumer shapes
 * from the event (`providerRequest`), sent under `<consumer>:<eventId>` on the first delivery and on a
 * duplicate that still owes the call; a payload it refuses writes nothing and calls nobody. On
 * DynamoDB Local: test/integration/entity-effect.test.ts.
 */

/** An inbox in memory: one claim per eventId, which remembers whether its provider call was recorded done. */
class MemoryEntityEffectLedger implements EntityEffectLedger {
  readonly consumer = 'billing';
  readonly claims = new Map<string, { callDone: boolean }>();

  async apply(event: EventEnvelope): Promise<LedgerResult> {
    const claim = this.claims.get(event.eventId);
    if (claim !== undefined) return { outcome: 'duplicate', providerCallPending: !claim.callDone };
    this.claims.set(event.eventId, { callDone: false });
    return { outcome: 'applied', providerCallPending: true };
  }

  async recordProviderCallDone(event: EventRef): Promise<void> {
    this.claims.set(event.eventId, { callDone: true });
  }

  async leaseProviderCall(): Promise<'granted'> {
    return 'granted';
  }

  async releaseProviderCallLease(): Promise<void> {}
}

/** A provider that keeps what it was sent, and fails the calls it is told to. */
function recordingProvider() {
  const received: { key: string; payload: Record<string, unknown> }[] = [];
  let failuresLeft = 0;
  const provider: ExternalProvider = {
    send: async (key, payload) => {
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        throw new Error('provider down');
      }
      received.push({ key, payload });
    },
  };
  return { provider, received, failNext: () => (failuresLeft = 1) };
}

const placed = (payload: unknown): EventEnvelope => ({
  eventId: 'evt-1',
  type: 'OrderPlaced',
  entityId: 'order-1',
  version: 1,
  occurredAt: '2026-01-01T00:00:00.000Z',
  payload,
});

const billed = z.object({ totalCents: z.int().min(1) });
/** A billing call needs the amount, which only the event's payload has. */
const billingRequest = (event: EventEnvelope) => ({
  orderId: event.entityId,
  amountCents: parseWith(billed, event.payload, 'a billed order').totalCents,
});

function parts(providerRequest?: EntityEffectDeps['providerRequest']) {
  const ledger = new MemoryEntityEffectLedger();
  const recording = recordingProvider();
  const deps: EntityEffectDeps = {
    consumer: 'billing',
    eventTypes: ['OrderPlaced'],
    ledger,
    provider: recording.provider,
    ...(providerRequest === undefined ? {} : { providerRequest }),
  };
  return { ledger, deps, ...recording };
}

test('the provider receives the request the consumer shaped from the event, under <consumer>:<eventId>', async () => {
  const { deps, received } = parts(billingRequest);

  const outcome = await applyEntityEffect(placed({ totalCents: 4200 }), deps);

  expect(outcome).toBe('applied');
  expect(received).toEqual([{ key: 'billing:evt-1', payload: { orderId: 'order-1', amountCents: 4200 } }]);
});

test('without providerRequest the provider receives the event identity', async () => {
  const { deps, received } = parts();

  await applyEntityEffect(placed({ totalCents: 4200 }), deps);

  expect(received).toEqual([
    {
      key: 'billing:evt-1',
      payload: { consumer: 'billing', eventId: 'evt-1', type: 'OrderPlaced', entityId: 'order-1', version: 1 },
    },
  ]);
});

test('a duplicate that still owes the call sends the same shaped request, once', async () => {
  const { deps, received, failNext } = parts(billingRequest);
  const event = placed({ totalCents: 4200 });
  failNext();

  await expect(applyEntityEffect(event, deps)).rejects.toThrow('provider down');
  const outcomes = [await applyEntityEffect(event, deps), await applyEntityEffect(event, deps)];

  expect(outcomes).toEqual(['duplicate', 'duplicate']);
  expect(received).toEqual([{ key: 'billing:evt-1', payload: { orderId: 'order-1', amountCents: 4200 } }]);
});

test('a payload the request cannot be shaped from is a PermanentError: nothing applied, nobody called', async () => {
  const { deps, ledger, received } = parts(billingRequest);

  const refused = applyEntityEffect(placed({ totalCents: 'a lot' }), deps);

  await expect(refused).rejects.toBeInstanceOf(PermanentError);
  await expect(refused).rejects.toMatchObject({ permanentCause: 'SchemaViolation' });
  expect(ledger.claims.size).toBe(0);
  expect(received).toEqual([]);
});

test('a consumer with no provider: the same event twice is applied once, and no call is made or marked', async () => {
  // Arrange: its spec names no provider, so its deps carry none.
  const { deps: withProvider, ledger } = parts();
  const { provider: _none, ...deps } = withProvider;
  const event = placed({ totalCents: 4200 });

  // Act
  const outcomes = [await applyEntityEffect(event, deps), await applyEntityEffect(event, deps)];

  // Assert
  expect(outcomes).toEqual(['applied', 'duplicate']);
  expect([...ledger.claims]).toEqual([['evt-1', { callDone: false }]]);
});
