import { inboxKey } from '../aws/inbox-table';
import { SEQUENCE_ATTRIBUTES } from '../aws/sequenced-table';

/**
 * The part of the fault plan (plan.ts, `FaultPlan.disableInboxClaim`) this switch reads. Declared here
 * rather than imported: plan.ts imports this module to parse the switch, so an import back would close
 * a circle; plan.ts spreads what {@link parseInboxBypass} returns into its FaultPlan, so the compiler
 * still holds the two shapes together.
 *
 * @example
 * ```ts
 * const bypass: InboxBypass = { disableInboxClaim: ['loyalty'] };
 * inboxClaimDisabled(bypass, 'loyalty'); // true
 * ```
 */
export interface InboxBypass {
  /** The consumers that skip their inbox claim. */
  disableInboxClaim?: string[];
}

/**
 * The local runtime's test-only switch: consumers named in the plan's
 * `disableInboxClaim` skip their inbox claim, so a duplicate delivery becomes a
 * second effect and the proof kit's verification must fail. Only the local
 * runtime's build reaches this module (`INBOX_BYPASS_BUILD`, bundleDefines in packages/cdk/src/function-defaults.ts); no
 * deployable bundle contains it.
 */
export function parseInboxBypass(source: Record<string, unknown>): InboxBypass {
  const disabled = source.disableInboxClaim;
  return Array.isArray(disabled)
    ? { disableInboxClaim: disabled.filter((d): d is string => typeof d === 'string') }
    : {};
}

/** Whether `consumer` skips its inbox claim under `plan`. */
export function inboxClaimDisabled(plan: InboxBypass, consumer: string): boolean {
  return plan.disableInboxClaim?.includes(consumer) === true;
}

/** What the switch needs of a DynamoDB document client: `send`, with the SDK's options. */
export interface DocumentSender {
  send(command: never, options?: never): Promise<unknown>;
}

/** A command as the document client takes it: its input, and its class to build another from. */
interface Command {
  readonly input: Record<string, unknown>;
  readonly constructor: new (input: Record<string, unknown>) => Command;
}

/** One item of a TransactWriteItems call: one operation (Put, Update, Delete or ConditionCheck) by its name. */
type TransactItem = Record<string, Record<string, unknown>>;

/**
 * The broken consumer of the local runtime (and of the simulation's `inboxClaim` guard), acting below
 * the ledger on what it sends, so no ledger knows of it: while `disabled()` says so, `documents` sends
 * every write of `consumer`'s inbox nowhere (the claim and the supersede marks leave each transaction;
 * the done-mark, the lease, its release and a stale event's mark are answered without being sent, so
 * a lease is always granted), and drops each effect's first-write guard: a condition that lets a write
 * through only while an attribute is absent (`attribute_not_exists`, the claim's own shape, as in
 * fulfilment's reserve or the entity-effect ledger's version check) would stop the very duplicate the
 * broken build exists to show. A sequenced ledger's claim (the sequence condition on its entity item,
 * aws/sequenced-ledger.ts) is that guard too: its update is sent without its condition, alone or first in the
 * transaction that writes the effect's other items. A condition on a state the item must already be in (fulfilment's
 * release: `version = 1`) stays, so a duplicate is never undone twice. A cancelled transaction answers
 * for the items its sender built: a dropped item's reason is `None`, so the ledger reads the effects'
 * reasons where it put them. Everything else goes through unchanged.
 *
 * @example The consumer's wiring, in the local runtime's build only (wiring/consumer-wiring.ts)
 * ```ts
 * const documents = withoutInbox(deps.documents, consumer, () => inboxClaimDisabled(faults.plan(), consumer));
 * ```
 */
export function withoutInbox<C extends DocumentSender>(documents: C, consumer: string, disabled: () => boolean): C {
  const inbox = inboxKey(consumer, '').pk; // `INBOX#<consumer>#`: every entry of this consumer's inbox, any tenant
  const send = (command: Command, options?: unknown): Promise<unknown> => {
    const sendAsIs = () => (documents.send as (c: Command, o?: unknown) => Promise<unknown>)(command, options);
    if (!disabled()) return sendAsIs();
    const items = command.input.TransactItems as TransactItem[] | undefined;
    // A read (GetItem: a Key, nothing to write) of an inbox entry goes through; only its writes are dropped.
    if (items === undefined) {
      if (isInboxWrite(command.input, inbox)) return Promise.resolve({});
      // A sequenced ledger's claim is its entity item's sequence condition: dropped, the update goes as a plain one.
      const unguarded = isSequencedClaim(command.input) ? withoutFirstWriteGuard({ Update: command.input }) : undefined;
      if (unguarded === undefined) return sendAsIs();
      return (documents.send as (c: Command, o?: unknown) => Promise<unknown>)(
        new command.constructor(unguarded.Update),
        options,
      );
    }
    if (!items.some((item) => isInboxEntry(operationOf(item), inbox)))
      return sentWithoutSequenceCondition(documents, command, options) ?? sendAsIs();
    const kept = items.flatMap((item, index) => {
      if (isInboxEntry(operationOf(item), inbox)) return [];
      const unguarded = withoutFirstWriteGuard(item);
      return unguarded === undefined ? [] : [{ item: unguarded, index }];
    });
    if (kept.length === 0) return Promise.resolve({});
    const sent = new command.constructor({ ...command.input, TransactItems: kept.map(({ item }) => item) });
    return (documents.send as (c: Command, o?: unknown) => Promise<unknown>)(sent, options).catch((error: unknown) => {
      throw reasonsFor(
        error,
        items.length,
        kept.map(({ index }) => index),
      );
    });
  };
  return new Proxy(documents, {
    get: (target, property, receiver) => (property === 'send' ? send : Reflect.get(target, property, receiver)),
  });
}

/**
 * A sequenced ledger's claim (aws/sequenced-ledger.ts) without its sequence condition, and nothing else
 * changed: the simulation's `sequenceCondition` guard off. While `disabled()` says so, a claim's update
 * (alone, or first in the transaction that writes other items with it, as fulfilment's stock) is sent
 * as a plain one, so a duplicate or a stale version is claimed and applied again; its lease, release
 * and done-mark go through as sent, and so does every other write.
 *
 * @example The simulation's guard (packages/tools/src/simulation/world/guards/sequence-condition.ts)
 * ```ts
 * const documents = on ? guarded : withoutSequenceCondition(guarded, () => true);
 * ```
 */
export function withoutSequenceCondition<C extends DocumentSender>(documents: C, disabled: () => boolean): C {
  const send = (command: Command, options?: unknown): Promise<unknown> =>
    (disabled() ? sentWithoutSequenceCondition(documents, command, options) : undefined) ??
    (documents.send as (c: Command, o?: unknown) => Promise<unknown>)(command, options);
  return new Proxy(documents, {
    get: (target, property, receiver) => (property === 'send' ? send : Reflect.get(target, property, receiver)),
  });
}

/** `command` sent with its sequenced claims unconditioned; undefined when it holds none (send it as it is). */
function sentWithoutSequenceCondition(
  documents: DocumentSender,
  command: Command,
  options: unknown,
): Promise<unknown> | undefined {
  const items = command.input.TransactItems as TransactItem[] | undefined;
  const claim = (item: TransactItem) => item.Update !== undefined && isSequencedClaim(item.Update);
  let input: Record<string, unknown>;
  if (items === undefined) {
    if (!isSequencedClaim(command.input)) return undefined;
    input = withoutFirstWriteGuard({ Update: command.input })!.Update;
  } else {
    if (!items.some(claim)) return undefined;
    input = {
      ...command.input,
      TransactItems: items.map((item) => (claim(item) ? withoutFirstWriteGuard(item)! : item)),
    };
  }
  return (documents.send as (c: Command, o?: unknown) => Promise<unknown>)(new command.constructor(input), options);
}

/**
 * Whether a single write is a sequenced ledger's claim (aws/sequenced-ledger.ts): an update whose condition
 * reads the entity item's sequence attributes. Its lease, release and done-mark read neither `seq` with the
 * event id, and go through as sent.
 */
function isSequencedClaim(input: Record<string, unknown>): boolean {
  const names = Object.values((input.ExpressionAttributeNames ?? {}) as Record<string, unknown>);
  return (
    typeof input.UpdateExpression === 'string' &&
    typeof input.ConditionExpression === 'string' &&
    names.includes(SEQUENCE_ATTRIBUTES.seq) &&
    names.includes(SEQUENCE_ATTRIBUTES.eventId)
  );
}

function operationOf(item: TransactItem): Record<string, unknown> {
  return Object.values(item)[0] ?? {};
}

/** Whether a single write (a Put's Item, an Update's expression) is of an entry under `inbox`. */
function isInboxWrite(input: Record<string, unknown>, inbox: string): boolean {
  return (input.Item !== undefined || input.UpdateExpression !== undefined) && isInboxEntry(input, inbox);
}

/** Whether a command's or an item's operation is on an entry under `inbox` (its Key, or the Item a Put writes). */
function isInboxEntry(operation: Record<string, unknown>, inbox: string): boolean {
  const key = (operation.Key ?? operation.Item) as { pk?: unknown } | undefined;
  return typeof key?.pk === 'string' && key.pk.startsWith(inbox);
}

/**
 * The item without its first-write guard (undefined: the item was nothing but that guard, a
 * ConditionCheck); names and values only the condition used go with it, as DynamoDB refuses unused ones.
 */
function withoutFirstWriteGuard(item: TransactItem): TransactItem | undefined {
  const [kind, operation] = Object.entries(item)[0];
  const condition = operation.ConditionExpression;
  if (typeof condition !== 'string' || !condition.includes('attribute_not_exists')) return item;
  if (kind === 'ConditionCheck') return undefined;
  const { ConditionExpression: _guard, ReturnValuesOnConditionCheckFailure: _oldImage, ...rest } = operation;
  const used = String(rest.UpdateExpression ?? '');
  const names = onlyUsed(rest.ExpressionAttributeNames, used);
  const values = onlyUsed(rest.ExpressionAttributeValues, used);
  const { ExpressionAttributeNames: _names, ExpressionAttributeValues: _values, ...unguarded } = rest;
  return {
    [kind]: {
      ...unguarded,
      ...(names === undefined ? {} : { ExpressionAttributeNames: names }),
      ...(values === undefined ? {} : { ExpressionAttributeValues: values }),
    },
  };
}

/** The placeholders (`#name`, `:value`) of `placeholders` that `expression` uses; undefined when none is. */
function onlyUsed(placeholders: unknown, expression: string): Record<string, unknown> | undefined {
  if (placeholders === undefined) return undefined;
  const used = Object.entries(placeholders as Record<string, unknown>).filter(([placeholder]) =>
    new RegExp(`${placeholder}(?![A-Za-z0-9_])`).test(expression),
  );
  return used.length === 0 ? undefined : Object.fromEntries(used);
}

/** A cancellation's reasons as for all `size` items the sender built: `sentAt[i]` is where the i-th sent item was. */
function reasonsFor(error: unknown, size: number, sentAt: number[]): unknown {
  const reasons = (error as { CancellationReasons?: unknown[] } | undefined)?.CancellationReasons;
  if (!Array.isArray(reasons)) return error;
  const all: unknown[] = Array.from({ length: size }, () => ({ Code: 'None' }));
  sentAt.forEach((index, i) => (all[index] = reasons[i]));
  (error as { CancellationReasons: unknown[] }).CancellationReasons = all;
  return error;
}
