import { expiresAfter, FINGERPRINT_ATTRIBUTE, INBOX_TTL_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
import type { InvocationFaults } from '../invocation';
import type { MechanismGuards } from '../options';
import { EFFECTS_TABLE } from '../tables';

/**
 * Guards `requestToken`, `fingerprint` and `futureStamps` (its claims' TTL half; the settings half is
 * in consumer-settings.ts): the ledger transactions as the code without each switched-off guard sent
 * them: no ClientRequestToken; inbox claims without their fingerprint; claims that expire counted from
 * the claim alone. Undefined with those guards on.
 */
export function transactionsWithoutGuards(
  guards: Pick<MechanismGuards, 'fingerprint' | 'futureStamps' | 'requestToken'>,
  now: () => Date,
  claimTtlSeconds: number,
): InvocationFaults['withoutGuards'] {
  const { fingerprint, futureStamps, requestToken } = guards;
  if (fingerprint && futureStamps && requestToken) return undefined;
  return (input) => ({
    ...input,
    ClientRequestToken: requestToken ? input.ClientRequestToken : undefined,
    TransactItems: input.TransactItems?.map((item) => {
      const put = item.Put;
      if (put?.TableName !== EFFECTS_TABLE || !String(put.Item?.pk).startsWith('INBOX#')) return item;
      const claim: Record<string, unknown> = { ...put.Item };
      if (!fingerprint) delete claim[FINGERPRINT_ATTRIBUTE];
      if (!futureStamps) claim[INBOX_TTL_ATTRIBUTE] = expiresAfter(now(), claimTtlSeconds);
      return { ...item, Put: { ...put, Item: claim } };
    }),
  });
}
