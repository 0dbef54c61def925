import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import type { EventEnvelope } from '../envelope';
import { tenantDigest } from '../inbox/keys';
import { routesFor, type ConsumerRoute } from '../outbox/routes';
import type { EventPublisher, PublisherOptions } from '../outbox/ports';
import { logger } from '../runtime/observability';
import { openSpan, type OpenSpan } from '../trace/spans';
import { formatTraceparent, parseTraceparent, type TraceContext } from '../trace/trace-context';

const SQS_BATCH_LIMIT = 10;

/**
 * SendMessageBatch calls one publish keeps in flight at once, across its routes. A relay batch of 100
 * events to three routes is 30 chunks: sent one after another they cost 30 round trips of the
 * relay's billed duration; all at once they would take 30 of the SDK client's 50 sockets, beside
 * the dispatched marks (MARKS_IN_FLIGHT) that follow. Ten keeps a full batch at three rounds.
 *
 * @example
 * ```ts
 * SENDS_IN_FLIGHT; // 10
 * ```
 */
export const SENDS_IN_FLIGHT = 10;

type Entry = SendMessageBatchRequestEntry & { Id: string };

/**
 * Publishes outbox events to every consumer route that takes their type
 * (packages/runtime/src/outbox/routes.ts). On a FIFO queue the message group is the
 * event's entityId, so one entity's events stay in order (or its orderingKey for a consumer ordered
 * by it: messageGroupOf), and the dedup id is
 * its eventId. On a standard queue an event with a tenant carries the tenant's digest as its message
 * group, which SQS fair queues use to keep one tenant's backlog from delaying the others' (fairQueueGroupOf).
 * Every entry of every batch is checked: SendMessageBatch succeeds
 * as a call even when some entries fail. An event is failed if any of its
 * destinations failed: its retry may deliver it twice to the others, which
 * dedupe on eventId.
 *
 * Each event's publication is a `relay` span, a child of the span that wrote it to the outbox (its
 * envelope's `traceparent`; a new trace without one). Its `traceparent` goes in the message's
 * `traceparent` attribute, so the consumer's spans are its children; the body stays exactly the
 * event that was stored.
 */
export class SqsEventPublisher implements EventPublisher {
  private readonly deduplicationId: (event: EventEnvelope) => string;
  /** The extra attributes in SQS's shape, built once: every message of this publisher carries the same. */
  private readonly attributes: Record<string, { DataType: 'String'; StringValue: string }>;

  /** `options`: another dedup id, extra attributes ({@link PublisherOptions}); none for the relay's own. */
  constructor(
    private readonly client: SQSClient,
    private readonly routes: readonly ConsumerRoute[],
    options: PublisherOptions = {},
  ) {
    this.deduplicationId = options.deduplicationId ?? ((event) => event.eventId);
    this.attributes = Object.fromEntries(
      Object.entries(options.attributes ?? {}).map(([name, value]) => [
        name,
        { DataType: 'String', StringValue: value },
      ]),
    );
  }

  async publish(events: readonly EventEnvelope[]): Promise<Set<string>> {
    const failed = new Set<string>();
    // A type no route takes counts as published, and is logged: nobody consumes it, so there is nothing to
    // deliver. Reported failed, it would never succeed: the relay would retry it (holding its stream shard
    // behind it) and the sweeper republish it every minute, raising the outbox-age alarm, for good. The
    // consumer list is checked against the types the domain writes, so this is a type written before any
    // consumer takes it (or after the last one stopped).
    const unrouted = events.filter((e) => routesFor(this.routes, e.type).length === 0);
    if (unrouted.length > 0)
      logger.warn('Events no consumer takes: marked dispatched, delivered nowhere', {
        events: unrouted.map((e) => ({ eventId: e.eventId, type: e.type })),
      });
    const opened = new Map<EventEnvelope, OpenSpan>(
      events.map((e) => [e, openSpan('relay', parseTraceparent(e.traceparent), { eventId: e.eventId, type: e.type })]),
    );
    const spans = new Map<EventEnvelope, TraceContext>([...opened].map(([e, span]) => [e, span.context]));
    const limit = inFlightLimit(SENDS_IN_FLIGHT);
    await Promise.all(
      this.routes.map((route) =>
        this.sendAll(
          route,
          events.filter((e) => route.eventTypes.includes(e.type)),
          failed,
          spans,
          limit,
        ),
      ),
    );
    const end = Date.now();
    for (const [event, span] of opened) span.end({ failed: failed.has(event.eventId), end });
    return failed;
  }

  /**
   * A batch entry's `Id` is its position in its chunk (`"0"`..`"9"`), never derived from the event:
   * SQS wants 1-80 characters of [A-Za-z0-9_-], distinct within the call, and rejects the whole call
   * otherwise. An event id may be up to 128 printable characters (packages/runtime/src/outbox/outbox-event.ts),
   * and two of them can map to the same id once their other characters are replaced (`a.1`, `a:1`):
   * either would fail the call on every retry and every sweep, with the nine events beside it. The
   * event id travels in the `eventId` attribute (and the body); the answer is mapped back by position.
   */
  private entry(event: EventEnvelope, route: ConsumerRoute, position: number, span: TraceContext): Entry {
    return {
      Id: String(position),
      MessageBody: JSON.stringify(event),
      MessageAttributes: {
        ...this.attributes,
        eventId: { DataType: 'String', StringValue: event.eventId },
        type: { DataType: 'String', StringValue: event.type },
        traceparent: { DataType: 'String', StringValue: formatTraceparent(span) },
      },
      ...(route.fifo
        ? { MessageGroupId: messageGroupOf(event, route), MessageDeduplicationId: this.deduplicationId(event) }
        : fairQueueGroupOf(event)),
    };
  }

  /**
   * The route's events in chunks of 10, sent side by side, at most {@link SENDS_IN_FLIGHT} calls at
   * once. On a FIFO route a chunk that shares a message group with an earlier chunk is sent only once
   * that chunk's call is over: FIFO keeps a group's order within one call and in the order of calls,
   * so two calls in flight for one group could deliver its later event first.
   */
  private async sendAll(
    route: ConsumerRoute,
    events: EventEnvelope[],
    failed: Set<string>,
    spans: Map<EventEnvelope, TraceContext>,
    limit: InFlightLimit,
  ) {
    const sends: Promise<void>[] = [];
    const lastSendOfGroup = new Map<string, Promise<void>>();
    for (let i = 0; i < events.length; i += SQS_BATCH_LIMIT) {
      const chunk = events.slice(i, i + SQS_BATCH_LIMIT);
      const groups = route.fifo ? [...new Set(chunk.map((e) => messageGroupOf(e, route)))] : [];
      const earlier = groups.flatMap((g) => lastSendOfGroup.get(g) ?? []);
      const send = Promise.all(earlier).then(() => limit(() => this.sendChunk(route, chunk, failed, spans)));
      for (const g of groups) lastSendOfGroup.set(g, send);
      sends.push(send);
    }
    await Promise.all(sends);
  }

  /** One SendMessageBatch of up to 10 events; never throws: what was not published is added to `failed`. */
  private async sendChunk(
    route: ConsumerRoute,
    chunk: EventEnvelope[],
    failed: Set<string>,
    spans: Map<EventEnvelope, TraceContext>,
  ): Promise<void> {
    const queueUrl = route.queueUrl;
    const entries = chunk.map((event, position) => this.entry(event, route, position, spans.get(event)!));
    try {
      const result = await this.client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      // Only an entry listed under Successful was published: one missing from both lists is failed too.
      const ok = new Set((result.Successful ?? []).map((s) => s.Id));
      entries.forEach((entry, position) => {
        if (!ok.has(entry.Id)) failed.add(chunk[position].eventId);
      });
      if (result.Failed?.length)
        logger.warn('Some batch entries were not published', {
          queueUrl,
          failed: result.Failed.map((f) => ({ ...f, eventId: chunk[Number(f.Id)]?.eventId })),
        });
    } catch (error) {
      // The whole call failed: every entry of the chunk is unpublished and will be retried.
      logger.warn('SendMessageBatch failed', { queueUrl, error });
      for (const event of chunk) failed.add(event.eventId);
    }
  }
}

/** Runs work with at most a fixed number in flight; the others wait for a free place. */
type InFlightLimit = (work: () => Promise<void>) => Promise<void>;

function inFlightLimit(size: number): InFlightLimit {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    while (active >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      await work();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}

/**
 * An event's FIFO message group on a route: its entity (one entity's events in order), or for a
 * consumer ordered by ordering key (`orderBy: 'ordering-key'`) the envelope's `orderingKey`, its
 * entity without one.
 *
 * @example
 * ```ts
 * messageGroupOf({ ...event, entityId: 'pay-1', orderingKey: 'acct-7' }, { ...route, orderBy: 'ordering-key' }); // 'acct-7'
 * ```
 */
export function messageGroupOf(event: EventEnvelope, route: Pick<ConsumerRoute, 'orderBy'>): string {
  return route.orderBy === 'ordering-key' ? (event.orderingKey ?? event.entityId) : event.entityId;
}

/**
 * A standard queue's message group for an event: its tenant's digest (tenantDigest: a group id is at
 * most 128 characters, a tenant ARN up to 2,048), so SQS fair queues can tell one tenant's backlog from
 * another's and deliver a quiet tenant's messages first while a noisy one's wait. On a standard queue
 * the group orders nothing and delays nothing: it only names the tenant. An event without a tenant
 * gets none (SQS then takes each such message as a tenant of its own).
 *
 * @example
 * ```ts
 * fairQueueGroupOf({ ...event, tenant: 'arn:aws:iam::123456789012:role/shop' }); // { MessageGroupId: '<22 characters>' }
 * fairQueueGroupOf({ ...event, tenant: undefined }); // {}
 * ```
 */
export function fairQueueGroupOf(event: Pick<EventEnvelope, 'tenant'>): { MessageGroupId?: string } {
  return event.tenant === undefined ? {} : { MessageGroupId: tenantDigest(event.tenant) };
}
