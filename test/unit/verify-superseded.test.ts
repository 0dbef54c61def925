import { inboxKey, SUPERSEDED_BY_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
import { providerKey } from '@exactly-once/runtime/consumer-spec';
import type { ProducedEvent } from '@exactly-once/tools/proof-kit/domain';
import {
  APPLIED_FEWER,
  checkEachEventOncePerConsumer,
  SUPERSEDED_WITHOUT_NEWER,
} from '@exactly-once/tools/proof-kit/verify';
import { thingHappened, thingUndone } from '../exactly-once/fixtures/probe-events';
import { PROBE_FIFO_SPEC } from '../exactly-once/fixtures/probe-spec';

/**
 * The kit's judgement of a stale mark: an inbox entry marked superseded (never claimed) counts as the
 * event's lawful end only when a newer event of its entity was produced. Otherwise the consumer
 * dropped it, and the run applied fewer events than it owes.
 */

const CONSUMERS = [PROBE_FIFO_SPEC];
const CLAIMED = { claimedAt: '2026-12-05T10:00:01.000Z' };
const produced = (...events: ReturnType<typeof thingHappened | typeof thingUndone>[]): ProducedEvent[] =>
  events.map((event) => ({ eventId: event.eventId, type: event.type, entityId: event.entityId, event }));
const entry = (eventId: string, fields: Record<string, unknown>) => {
  const { pk } = inboxKey(PROBE_FIFO_SPEC.name, eventId);
  return [pk, { pk, ...fields }] as const;
};
const calledOnce = (...eventIds: string[]) =>
  new Map(eventIds.map((id) => [providerKey(PROBE_FIFO_SPEC.name, { eventId: id }), { calls: 1 }] as const));

test('an event marked superseded by a newer version of its entity is lawfully not applied: no violation', () => {
  const [happened, undone] = [thingHappened('thing-1'), thingUndone('thing-1')];
  const effects = new Map([
    entry(happened.eventId, { [SUPERSEDED_BY_ATTRIBUTE]: undone.eventId }),
    entry(undone.eventId, CLAIMED),
  ]);

  const { violations } = checkEachEventOncePerConsumer({
    events: produced(happened, undone),
    consumers: CONSUMERS,
    effects,
    providerLog: calledOnce(undone.eventId),
  });

  expect(violations).toEqual([]);
});

test('an event marked superseded when no newer event of its entity was produced was dropped: both the event and the count say so', () => {
  // thing-2's event judged stale against thing-1's: the entity was named after something both share.
  const first = thingHappened('thing-1', { entityId: 'account-1' });
  const second = thingUndone('thing-2', { entityId: 'account-1' });
  const effects = new Map([
    entry(first.eventId, { [SUPERSEDED_BY_ATTRIBUTE]: second.eventId }),
    entry(second.eventId, CLAIMED),
  ]);
  const dropped = thingHappened('thing-3', { entityId: 'account-1', version: 2 });
  const withDropped = new Map([...effects, entry(dropped.eventId, { [SUPERSEDED_BY_ATTRIBUTE]: second.eventId })]);

  const { violations } = checkEachEventOncePerConsumer({
    events: produced(first, second, dropped),
    consumers: CONSUMERS,
    effects: withDropped,
    providerLog: calledOnce(second.eventId),
  });

  expect(violations).toEqual([
    {
      invariant: SUPERSEDED_WITHOUT_NEWER,
      detail: expect.stringMatching(
        /^probe-fifo: 2 events are version 2 of entity account-1 \(thing-2:undone, thing-3:happened\): a version guard keeps one of them and drops the rest as stale/,
      ),
    },
    {
      invariant: SUPERSEDED_WITHOUT_NEWER,
      detail: `probe-fifo: ThingHappened thing-3:happened (entity account-1, version 2) is marked superseded by thing-2:undone, but no newer event of its entity was produced: it was dropped as stale, never applied`,
    },
    {
      invariant: APPLIED_FEWER,
      detail:
        'probe-fifo: applied 1 of the 3 events it owes, 1 more superseded by a newer event of their entity; 1 marked superseded were dropped (no newer event of their entity, or one at their own version)',
    },
  ]);
});
