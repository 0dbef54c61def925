import * as fs from 'node:fs';
import type { PerformedEffect, ProviderChaosPlan, ProviderCounters, ProviderLog } from '../local-runtime/provider';
import { keyedProviderLine, type ProofDomain, type ProviderSummary } from './domain';

export type { ProviderSummary } from './domain';

/**
 * What reached the consumers' providers, in the shape the verification reads (one item per
 * idempotency key: `calls`, `firstCalledAt`, `lastCalledAt`), from wherever the target's providers
 * keep it: the local provider's log (`GET <LocalProviderUrl>/__log`: the effects it performed,
 * counted where they happen), or the recording double's table (ProviderLogTableName).
 */
export type ProviderCallItem = Record<string, unknown> & {
  idempotencyKey: string;
  calls: number;
  firstCalledAt?: string;
  lastCalledAt?: string;
};

/** The local provider's log, or undefined for a target whose providers are the recording double. */
export async function localProviderLog(outputs: Record<string, string>): Promise<ProviderLog | undefined> {
  const url = outputs.LocalProviderUrl;
  if (url === undefined) return undefined;
  const response = await fetch(`${url}/__log`);
  if (!response.ok) throw new Error(`The local provider's log (${url}/__log) answered ${response.status}`);
  return (await response.json()) as ProviderLog;
}

/** The local provider's counters alone (`GET /__counters`), or undefined without one: cheap enough to sample every second. */
export async function localProviderCounters(outputs: Record<string, string>): Promise<ProviderCounters | undefined> {
  const url = outputs.LocalProviderUrl;
  if (url === undefined) return undefined;
  const response = await fetch(`${url}/__counters`);
  if (!response.ok) throw new Error(`The local provider's counters (${url}/__counters) answered ${response.status}`);
  return (await response.json()) as ProviderCounters;
}

/**
 * Sends the local provider a control request (`PUT /__chaos`, `POST /__keys/forget`), authorized
 * with the API key the runtime wrote to `LocalProviderApiKeyFile`. Throws on a target without one.
 */
async function controlLocalProvider(
  outputs: Record<string, string>,
  method: 'PUT' | 'POST',
  route: string,
  body: unknown,
): Promise<unknown> {
  const url = outputs.LocalProviderUrl;
  const keyFile = outputs.LocalProviderApiKeyFile;
  if (url === undefined || keyFile === undefined)
    throw new Error('This target has no local provider (no LocalProviderUrl and LocalProviderApiKeyFile outputs)');
  const response = await fetch(`${url}${route}`, {
    method,
    headers: { authorization: `Bearer ${fs.readFileSync(keyFile, 'utf8').trim()}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok)
    throw new Error(`The local provider's ${route} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/** Replaces the local provider's chaos plan (`{}`: none). */
export async function setLocalProviderChaos(outputs: Record<string, string>, plan: ProviderChaosPlan): Promise<void> {
  await controlLocalProvider(outputs, 'PUT', '/__chaos', plan);
}

/**
 * Makes the local provider forget the answered idempotency keys first taken at or after `takenSinceMs`
 * (epoch ms: the run's start), its key window passing at once for this run's keys; returns how many.
 * Keys of earlier runs on the same runtime are neither forgotten nor counted.
 */
export async function forgetLocalProviderKeys(outputs: Record<string, string>, takenSinceMs: number): Promise<number> {
  const answer = (await controlLocalProvider(outputs, 'POST', '/__keys/forget', { takenSince: takenSinceMs })) as {
    forgotten: number;
  };
  return answer.forgotten;
}

/**
 * One item per key: every request under it counts as a call (performed, replayed, refused while the
 * first was running), and the first and last time it was performed bound when its effect happened.
 */
export function providerCallItemsOf(log: ProviderLog): ProviderCallItem[] {
  const performedAt = new Map<string, string[]>();
  for (const effect of log.performed)
    if (effect.key !== null) performedAt.set(effect.key, [...(performedAt.get(effect.key) ?? []), effect.performedAt]);
  return Object.values(log.keys).flatMap((byKey) =>
    Object.entries(byKey).map(([key, counts]) => {
      const times = (performedAt.get(key) ?? []).sort();
      return {
        idempotencyKey: key,
        calls: counts.requests,
        ...(times.length > 0 ? { firstCalledAt: times[0], lastCalledAt: times[times.length - 1] } : {}),
      };
    }),
  );
}

/**
 * The entity a provider key `<consumer>:<entityId>.<event>` (or `<consumer>@<tenant hash>:<entityId>.<event>`)
 * belongs to (an event id starts with its entity's id; the hash holds no `:`).
 */
export const entityOfKey = (key: string): string => key.split(':')[1]?.split('.')[0] ?? '';

/** `<consumer>:<eventId>` of a provider key of either shape (packages/runtime/src/inbox/keys.ts): the tenant's hash dropped. */
export const consumerEventOfKey = (key: string): string => key.replace(/^([a-z0-9-]+)@[^:]*:/, '$1:');

/** The part of the log that belongs to these entities (the local provider serves every run of an `npm start`). */
export function logOfEntities(
  log: ProviderLog,
  entityIds: ReadonlySet<string>,
  domain: Pick<ProofDomain, 'entityOfPayload'>,
): ProviderLog {
  const ours = (key: string | null) => key !== null && entityIds.has(entityOfKey(key));
  // An effect sent without a key belongs to the entity its payload names, where the domain can tell.
  const unkeyedOurs = (e: PerformedEffect) => {
    const entity = e.key === null ? domain.entityOfPayload?.(e.payload) : undefined;
    return entity !== undefined && entityIds.has(entity);
  };
  return {
    ...log,
    performed: log.performed.filter((e) => ours(e.key) || unkeyedOurs(e)),
    keys: Object.fromEntries(
      Object.entries(log.keys).map(([endpoint, byKey]) => [
        endpoint,
        Object.fromEntries(Object.entries(byKey).filter(([key]) => ours(key))),
      ]),
    ),
  };
}

/** Each provider's summary from the local provider's log, keyed by provider. */
export function summarizeProviders(log: ProviderLog): ProviderSummary[] {
  return Object.keys(log.keys)
    .sort()
    .map((provider) => {
      const effects = log.performed.filter((e) => e.endpoint === provider);
      const perKey = new Map<string, number>();
      for (const e of effects) if (e.key !== null) perKey.set(e.key, (perKey.get(e.key) ?? 0) + 1);
      const counts = Object.values(log.keys[provider] ?? {});
      return {
        provider,
        keyless: (log.keyless ?? []).includes(provider),
        performed: effects.length,
        duplicates: [...perKey.values()].reduce((sum, n) => sum + n - 1, 0),
        answersLost: effects.filter(isAnswerLost).length,
        absorbedByKey: counts.reduce((sum, c) => sum + c.replayed + c.inProgress, 0),
        effects,
      };
    });
}

/**
 * A provider's figures for the report: the numbers its rows state and, for the chart over the run, when
 * each counted thing happened (epoch ms), one time per count, so the chart's lines end on the rows' numbers.
 */
export interface ProviderFigures {
  provider: string;
  performed: number;
  duplicates: number;
  answersLost: number;
  absorbedByKey: number;
  at: {
    performed: number[];
    answersLost: number[];
    /** Absent where the provider's log has no times for them (a log written before it kept them). */
    absorbed?: number[];
  };
}

/** Each provider's {@link ProviderFigures}, from the same summaries as its line. */
export function providerFigures(log: ProviderLog): ProviderFigures[] {
  return summarizeProviders(log).map((s) => {
    const times = (effects: readonly PerformedEffect[]) => effects.map((e) => Date.parse(e.performedAt));
    const lost = s.effects.filter(isAnswerLost);
    const keys = Object.values(log.keys[s.provider] ?? {});
    const absorbed = keys.every((c) => (c.absorbedAt?.length ?? 0) === c.replayed + c.inProgress)
      ? keys.flatMap((c) => (c.absorbedAt ?? []).map((at) => Date.parse(at)))
      : undefined;
    return {
      provider: s.provider,
      performed: s.performed,
      duplicates: s.duplicates,
      answersLost: s.answersLost,
      absorbedByKey: s.absorbedByKey,
      at: { performed: times(s.effects), answersLost: times(lost), ...(absorbed === undefined ? {} : { absorbed }) },
    };
  });
}

const isAnswerLost = (e: PerformedEffect) => e.answer === 'dropped' || e.answer === 'abandoned';

/**
 * One line per provider, the domain's where it gives one (`ProofDomain.providerLine`), else:
 * `provider audit: 120 performed for 120 entities, 0 duplicates (keyed); 3 answers lost, 41 retried calls absorbed by the key`
 */
export function providerLines(
  summaries: readonly ProviderSummary[],
  entities: number,
  domain: Pick<ProofDomain, 'providerLine'>,
): string[] {
  return summaries.map((s) => domain.providerLine?.(s, entities) ?? keyedProviderLine(s, `${entities} entities`));
}
