import type { TransactWriteCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { ConsumerHarness } from './neutral-consumers';

/**
 * A small effects table behind a consumer harness's mocked document client, for the unit tests of the
 * consumer loop: what DynamoDB does with the inbox's and the ledgers' writes, so a test reads the
 * resulting items directly instead of the calls made.
 */

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** The transactions the consumer sent, in order, item by item. */
export const transactions = (h: ConsumerHarness): TransactItem[][] =>
  h.doc.commandCalls(h.docSdk.TransactWriteCommand).map((c) => c.args[0].input.TransactItems ?? []);
/** The inbox claim's key: the first item of every consumer transaction. */
export const claimOf = (items: TransactItem[]) => String(items[0]?.Put?.Item?.pk);
/** The eventIds the consumer's transactions claimed, in order. */
export const claimedEventIds = (h: ConsumerHarness) =>
  transactions(h).map((t) => claimOf(t).replace(`INBOX#${h.name}#`, ''));
/** The recording provider's calls (its UpdateItem on the provider-log table), in order. */
export const providerCalls = (h: ConsumerHarness, providerTable: string) =>
  h.doc
    .commandCalls(h.docSdk.UpdateCommand)
    .map((c) => c.args[0].input)
    .filter((input) => input.TableName === providerTable);
export const providerKeys = (h: ConsumerHarness, providerTable: string) =>
  providerCalls(h, providerTable).map((c) => c.Key?.idempotencyKey);
/** The provider-call leases given back by their holder. */
export const leaseReleases = (h: ConsumerHarness) =>
  h.doc
    .commandCalls(h.docSdk.UpdateCommand)
    .map((c) => c.args[0].input)
    .filter((input) => input.UpdateExpression?.startsWith('REMOVE #lease'));

/** A TransactWriteItems cancellation as DynamoDB reports it: one reason per item, the old item where asked. */
export function canceledTransaction(h: ConsumerHarness, reasons: { Code: string; Item?: Record<string, unknown> }[]) {
  return new h.ddbSdk.TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: reasons.map((r) => ({ Code: r.Code, ...(r.Item ? { Item: marshall(r.Item) } : {}) })),
  });
}

/** The claim cancellation DynamoDB returns when the inbox already holds the eventId. */
export const claimTaken = (h: ConsumerHarness, items: number) =>
  canceledTransaction(h, [
    { Code: 'ConditionalCheckFailed' },
    ...Array.from({ length: items - 1 }, () => ({ Code: 'None' })),
  ]);

/** A DynamoDB error that is not the claim's condition: throttling. */
export function throttled(h: ConsumerHarness) {
  return new h.ddbSdk.ProvisionedThroughputExceededException({
    message: 'Rate of requests exceeds the allowed throughput',
    $metadata: {},
  });
}

/** The version guard of the generic entity effect (DynamoDbEntityEffectLedger). */
const ENTITY_VERSION_GUARD = 'attribute_not_exists(lastVersion) OR lastVersion < :version';

/**
 * The effects table behind TransactWriteItems and the inbox's UpdateItem:
 * all-or-nothing, with the ledgers' conditions enforced (`attribute_not_exists(pk)`, a version
 * `= :reserved`, the entity effect's `lastVersion < :version`), the old image returned where ALL_OLD
 * is asked, and SET/ADD applied. `failFor` injects an error for a given eventId (before anything is
 * written), as a throttle would.
 *
 * `conflicts` makes it behave like DynamoDB under concurrency: each transaction
 * stays in flight for a turn of the event loop, and one that touches an item
 * another in-flight transaction holds is cancelled with TransactionConflict on
 * that item (a single write to such an item fails with TransactionConflictException).
 */
export class FakeEffectsTable {
  readonly items = new Map<string, Record<string, unknown>>();
  readonly failFor = new Map<string, Error>();
  conflicts = false;
  conflictsRaised = 0;
  /** Fails the next done-mark (provider call recorded done) with this error, once. */
  failDoneMarkOnce: Error | undefined;
  commits = 0;
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly h: ConsumerHarness,
    effectsTable: string,
  ) {
    h.doc.on(h.docSdk.TransactWriteCommand).callsFake((input: TransactWriteCommandInput) => this.transact(input));
    h.doc
      .on(h.docSdk.UpdateCommand, { TableName: effectsTable })
      .callsFake((input: UpdateCommandInput) => this.update(input));
  }

  /** This consumer's inbox entry for an event. */
  inbox(eventId: string): Record<string, unknown> | undefined {
    return this.items.get(`INBOX#${this.h.name}#${eventId}`);
  }

  /** This consumer's generic entity effect on an entity (`EFFECT#<consumer>#<entityId>`). */
  entity(entityId: string): Record<string, unknown> | undefined {
    return this.items.get(`EFFECT#${this.h.name}#${entityId}`);
  }

  private async transact(input: TransactWriteCommandInput): Promise<Record<string, never>> {
    const items = input.TransactItems ?? [];
    const claim = claimOf(items);
    const injected = [...this.failFor].find(([eventId]) => claim === `INBOX#${this.h.name}#${eventId}`)?.[1];
    if (injected !== undefined) throw injected;
    const keys = items.map((item) => String(item.Put?.Item?.pk ?? item.Update?.Key?.pk));
    if (this.conflicts) {
      if (keys.some((k) => this.inFlight.has(k))) {
        this.conflictsRaised += 1;
        throw canceledTransaction(
          this.h,
          keys.map((k) => ({ Code: this.inFlight.has(k) ? 'TransactionConflict' : 'None' })),
        );
      }
      keys.forEach((k) => this.inFlight.add(k));
      await new Promise((resolve) => setImmediate(resolve));
    }
    try {
      const reasons = items.map((item) => this.check(item));
      if (reasons.some((r) => r.Code !== 'None')) throw canceledTransaction(this.h, reasons);
      for (const item of items) this.apply(item);
      this.commits += 1;
      return {};
    } finally {
      keys.forEach((k) => this.inFlight.delete(k));
    }
  }

  /**
   * The inbox's own writes: the provider call recorded done (`attribute_exists(pk)`),
   * its lease taken by a duplicate (done, superseded, a live lease of another: refused
   * with the old item), the lease given back by its holder, and a stale event's entry
   * marked superseded (no condition).
   */
  private update(input: UpdateCommandInput): Record<string, never> {
    const pk = String(input.Key?.pk);
    if (this.conflicts && this.inFlight.has(pk)) {
      this.conflictsRaised += 1;
      throw new this.h.ddbSdk.TransactionConflictException({ message: 'Transaction is ongoing', $metadata: {} });
    }
    const old = this.items.get(pk);
    const values = input.ExpressionAttributeValues ?? {};
    const refuse = () => {
      throw new this.h.ddbSdk.ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && old ? (marshall(old) as never) : undefined,
      });
    };
    const condition = input.ConditionExpression;
    if (condition === '#holder = :me') {
      if (old?.providerCallLeaseHolder !== values[':me']) refuse();
      delete old!.providerCallLeaseUntil;
      delete old!.providerCallLeaseHolder;
      return {};
    }
    if (condition === undefined) {
      // An unconditional write (marking an entry superseded): applied as it comes.
    } else if (condition.includes('#lease < :now')) {
      const free =
        old !== undefined &&
        old.providerCallDoneAt === undefined &&
        old.supersededBy === undefined &&
        (old.providerCallLeaseUntil === undefined ||
          Number(old.providerCallLeaseUntil) < Number(values[':now']) ||
          old.providerCallLeaseHolder === values[':me']);
      if (!free) refuse();
    } else if (condition !== 'attribute_exists(pk)') {
      throw new Error(`fake table: unsupported condition ${input.ConditionExpression}`);
    } else if (old === undefined) refuse();
    else if (this.failDoneMarkOnce !== undefined) {
      const error = this.failDoneMarkOnce;
      this.failDoneMarkOnce = undefined;
      throw error;
    }
    this.apply({ Update: input as NonNullable<TransactItem['Update']> });
    return {};
  }

  private check(item: TransactItem): { Code: string; Item?: Record<string, unknown> } {
    if (item.Put) {
      const condition = item.Put.ConditionExpression;
      if (condition === undefined) return { Code: 'None' };
      if (condition !== 'attribute_not_exists(pk)') throw new Error(`fake table: unsupported condition ${condition}`);
      const old = this.items.get(String(item.Put.Item?.pk));
      if (old === undefined) return { Code: 'None' };
      return {
        Code: 'ConditionalCheckFailed',
        Item: item.Put.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' ? old : undefined,
      };
    }
    if (item.Update) {
      const condition = item.Update.ConditionExpression;
      if (condition === undefined) return { Code: 'None' };
      const old = this.items.get(String(item.Update.Key?.pk));
      const values = item.Update.ExpressionAttributeValues ?? {};
      let holds: boolean;
      if (condition === 'version = :reserved') holds = old !== undefined && old.version === values[':reserved'];
      else if (condition === ENTITY_VERSION_GUARD)
        holds = old?.lastVersion === undefined || Number(old.lastVersion) < Number(values[':version']);
      else throw new Error(`fake table: unsupported condition ${condition}`);
      if (holds) return { Code: 'None' };
      return {
        Code: 'ConditionalCheckFailed',
        Item: item.Update.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' ? old : undefined,
      };
    }
    throw new Error('fake table: only Put and Update are used by the ledgers');
  }

  private apply(item: TransactItem): void {
    if (item.Put) {
      this.items.set(String(item.Put.Item?.pk), { ...item.Put.Item });
      return;
    }
    const update = item.Update;
    if (!update) return;
    const pk = String(update.Key?.pk);
    const next: Record<string, unknown> = { ...update.Key, ...this.items.get(pk) };
    const values = update.ExpressionAttributeValues ?? {};
    const nameOf = (token: string) => update.ExpressionAttributeNames?.[token] ?? token;
    for (const [, verb, body] of (update.UpdateExpression ?? '').matchAll(
      /(SET|ADD)\s+(.*?)(?=\s+(?:SET|ADD|REMOVE)\s|$)/g,
    )) {
      // Commas inside if_not_exists(a, :b) do not separate clauses.
      for (const clause of body.split(/,(?![^(]*\))/).map((c) => c.trim())) {
        if (verb === 'SET') {
          const [name, value] = clause.split(/\s*=\s*/);
          const ifNotExists = /^if_not_exists\((\S+),\s*(:\w+)\)$/.exec(value);
          if (ifNotExists !== null) {
            next[nameOf(name)] = next[nameOf(ifNotExists[1])] ?? values[ifNotExists[2]];
            continue;
          }
          if (!value.startsWith(':')) throw new Error(`fake table: unsupported SET ${clause}`);
          next[nameOf(name)] = values[value];
        } else {
          const [name, value] = clause.split(/\s+/);
          next[nameOf(name)] = Number(next[nameOf(name)] ?? 0) + Number(values[value]);
        }
      }
    }
    this.items.set(pk, next);
  }
}
