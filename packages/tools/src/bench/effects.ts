import { BatchGetItemCommand, type AttributeValue, type BatchGetItemCommandOutput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { inboxKey, PROVIDER_CALL_DONE_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';

/**
 * When each of the domain's consumers applied its effect of each event, read from the consumers' own
 * inbox claims in the effects table, whatever the consumer does: a claim commits in one transaction
 * with the consumer's effect, so it is there exactly when the effect is. A consumer whose spec names
 * providers has finished its effect when the provider accepted the call (the claim's done-mark,
 * `providerCallDoneAt`); one that names none has finished when its claim committed (`claimedAt`), or,
 * if it calls the recording double all the same (the neutral fixture's, a scaffolded one), when its
 * done-mark says that call was made. Nothing here assumes a provider write the consumer may never make.
 */
export interface InboxClaimTimes {
  claimedAt?: string;
  providerCallDoneAt?: string;
}

/** When the consumer's effect of an event was complete (epoch ms), from its claim; undefined: not (yet). */
export function effectAppliedAt(
  spec: Pick<ConsumerSpec, 'providers'>,
  claim: InboxClaimTimes | undefined,
): number | undefined {
  if (claim === undefined) return undefined;
  const at =
    (spec.providers ?? []).length > 0 ? claim.providerCallDoneAt : (claim.providerCallDoneAt ?? claim.claimedAt);
  if (at === undefined) return undefined;
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * `<consumer>:<eventId>` -> epoch ms at which the consumer's effect of the event was complete, for every
 * consumer and event whose claim says so; an event is found under the inbox key its tenant gives it.
 */
export async function appliedEffects(
  dynamodb: DynamoDBClient,
  effectsTable: string,
  consumers: readonly Pick<ConsumerSpec, 'name' | 'providers'>[],
  events: readonly { eventId: string; tenant?: string }[],
): Promise<Map<string, number>> {
  const wanted = consumers.flatMap((spec) =>
    events.map((e) => ({ spec, id: `${spec.name}:${e.eventId}`, key: inboxKey(spec.name, e.eventId, e.tenant) })),
  );
  const byKey = new Map(wanted.map((w) => [`${w.key.pk}\n${w.key.sk}`, w]));
  const applied = new Map<string, number>();
  for (let i = 0; i < wanted.length; i += 100) {
    let keys: Record<string, AttributeValue>[] | undefined = wanted
      .slice(i, i + 100)
      .map(({ key }) => ({ pk: { S: key.pk }, sk: { S: key.sk } }));
    while (keys !== undefined && keys.length > 0) {
      const output: BatchGetItemCommandOutput = await dynamodb.send(
        new BatchGetItemCommand({
          RequestItems: {
            [effectsTable]: {
              Keys: keys,
              ConsistentRead: true,
              ProjectionExpression: 'pk, sk, claimedAt, #done',
              ExpressionAttributeNames: { '#done': PROVIDER_CALL_DONE_ATTRIBUTE },
            },
          },
        }),
      );
      for (const item of output.Responses?.[effectsTable] ?? []) {
        const found = byKey.get(`${item.pk?.S}\n${item.sk?.S}`);
        if (found === undefined) continue;
        const at = effectAppliedAt(found.spec, {
          claimedAt: item.claimedAt?.S,
          providerCallDoneAt: item[PROVIDER_CALL_DONE_ATTRIBUTE]?.S,
        });
        if (at !== undefined) applied.set(found.id, at);
      }
      keys = output.UnprocessedKeys?.[effectsTable]?.Keys;
    }
  }
  return applied;
}
