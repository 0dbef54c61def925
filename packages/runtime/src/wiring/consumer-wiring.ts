import { readFile } from 'node:fs/promises';
import { dynamoDbDocumentClient, sqsClient } from '../aws/clients';
import type { LedgerOptions } from '../aws/inbox-ledger';
import { DynamoDbTryCounter } from '../aws/dynamodb-try-counter';
import { HttpProvider } from '../aws/http-provider';
import { apiKeyFromParameter, type RefreshableApiKey } from '../aws/parameter-api-key';
import { RecordingProvider } from '../aws/recording-provider';
import { SqsMessageControl } from '../aws/sqs-message-control';
import { isContention } from '../aws/transient-errors';
import { attemptsForBudget, RETRY_BUDGET, RETRY_ENV } from '../consumer/retry-budget';
import { consumerFaults, type Apply } from '../faults/consumer-faults';
import { inboxClaimDisabled, withoutInbox } from '../faults/inbox-bypass';
import type { ConsumerSpec } from '../consumer-spec';
import type { ExternalProvider } from '../provider/provider';
import { optionalEnv, optionalIntEnv, requireEnv, requireIntEnv } from '../config';
import { IN_PROCESS_RETRY } from '../runtime/contention-retry';
import { ENV, providerEnvNames } from '../env-names';
import { metrics } from '../runtime/observability';
import type { ConsumerSettings } from '../consumer/consume-record';

/**
 * What a queue consumer is configured with: the stack's environment, read once at cold start.
 *
 * @example
 * ```ts
 * const config: ConsumerConfig = consumerConfigFromEnv({ consumer: 'loyalty', fifo: false, providers: ['mail'] });
 * ```
 */
export interface ConsumerConfig {
  consumer: string;
  fifo: boolean;
  effectsTable: string;
  providerTable: string;
  inboxTtlSeconds: number;
  /**
   * The oldest event (by occurredAt) the consumer applies by itself; derived with inboxTtlSeconds.
   * Infinity for a consumer on the sequenced ledger, whose claims never expire.
   */
  dedupeHorizonSeconds: number;
  /** The ledger the consumer's spec names (ConsumerSpec.ledger); a ledger of the other kind refuses to be built. */
  ledger?: 'inbox' | 'sequenced';
  queueUrl: string;
  deadLetterQueueUrl: string;
  backoff: { baseSeconds: number; capSeconds: number };
  /** FIFO only: the consumer's own try limit. */
  maxAttempts: number;
  /**
   * The code this consumer runs (CODE_VERSION), written on its DLQ copies.
   * @default 'unknown'
   */
  codeVersion?: string;
  /**
   * The spec's providers that are configured, by name: endpoint and API-key parameter. A provider
   * not here is the recording test double.
   * @default none configured
   */
  providers?: Readonly<Record<string, ProviderConfig>>;
}

/**
 * Where a configured HTTP provider is and where its API key is kept.
 *
 * @example
 * ```ts
 * const mail: ProviderConfig = { endpoint: 'https://mail.example/v1/messages', apiKey: { parameter: '/shop/prod/mail-api-key' } };
 * ```
 */
export interface ProviderConfig {
  endpoint: string;
  /** Where the API key is: an SSM SecureString parameter (deployed), or a file (the local runtime). */
  apiKey: { parameter: string } | { file: string };
}

/**
 * A consumer's configuration from the stack's environment, read once at cold start; throws, naming the variable, when one is missing.
 *
 * @example
 * ```ts
 * const config = consumerConfigFromEnv({ consumer: SPEC.name, fifo: SPEC.fifo, providers: SPEC.providers });
 * ```
 */
export function consumerConfigFromEnv(options: {
  consumer: string;
  fifo: boolean;
  providers?: readonly string[];
}): ConsumerConfig {
  const { providers = [], ...spec } = options;
  const ledger = process.env[ENV.consumerLedger] === 'sequenced' ? 'sequenced' : 'inbox';
  return {
    ...spec,
    ledger,
    effectsTable: requireEnv(ENV.effectsTable),
    providerTable: requireEnv(ENV.providerLogTable),
    inboxTtlSeconds: requireIntEnv(ENV.inboxTtlSeconds),
    // A sequenced consumer's claims never expire: it applies an event of any age (ConsumerSpec.ledger).
    dedupeHorizonSeconds: ledger === 'sequenced' ? Number.POSITIVE_INFINITY : requireIntEnv(ENV.dedupeHorizonSeconds),
    queueUrl: requireEnv(ENV.queueUrl),
    deadLetterQueueUrl: requireEnv(ENV.deadLetterQueueUrl),
    // The stack sets these from RETRY_BUDGET; the defaults are the same numbers, for tests that set none.
    backoff: {
      baseSeconds: optionalIntEnv(RETRY_ENV.baseSeconds, RETRY_BUDGET.baseSeconds),
      capSeconds: optionalIntEnv(RETRY_ENV.capSeconds, RETRY_BUDGET.capSeconds),
    },
    maxAttempts: optionalIntEnv(RETRY_ENV.maxAttempts, attemptsForBudget(RETRY_BUDGET)),
    // Set by FunctionWithDefaults on every deployed function; a consumer built otherwise says 'unknown'.
    codeVersion: optionalEnv(ENV.codeVersion, 'unknown'),
    providers: Object.fromEntries(
      providers.flatMap((name) => {
        const names = providerEnvNames(name);
        const endpoint = process.env[names.endpoint];
        // Unset: the stage configures no endpoint for it, and the recording double stands in.
        if (endpoint === undefined || endpoint === '') return [];
        const file = process.env[names.apiKeyFile];
        const apiKey = file !== undefined && file !== '' ? { file } : { parameter: requireEnv(names.apiKeyParameter) };
        return [[name, { endpoint, apiKey }]];
      }),
    ),
  };
}

/**
 * What a consumer's parts are built on. A deployed function passes its AWS
 * clients and nothing else; the simulation passes one invocation's clients,
 * its virtual clock and waits, and its own providers.
 *
 * @example
 * ```ts
 * const wiring = consumerWiring(config, { documents: dynamoDbDocumentClient(), sqs: sqsClient() });
 * ```
 */
export interface ConsumerDependencies {
  documents: ReturnType<typeof dynamoDbDocumentClient>;
  sqs: ReturnType<typeof sqsClient>;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /**
   * Starts a timer that calls `fire` after `ms`, returning its cancel (default:
   * setTimeout): the records' deadline. The simulation's runs on its virtual clock.
   */
  setTimer?: (ms: number, fire: () => void) => () => void;
  /** The external provider called `name` (default: the provider log, RecordingProvider). */
  provider?: (name: string) => ExternalProvider;
}

/**
 * A deployed consumer's wiring, from its spec: its environment and AWS clients; its metrics carry the spec's name.
 *
 * @example An entry module's deployed parts (its binding, a module of its own, calls `makeHandler(partsFromEnv())` at cold start)
 * ```ts
 * export function partsFromEnv(): ConsumerWiring {
 *   return deployedConsumerWiring(consumerSpec('loyalty'));
 * }
 * ```
 */
export function deployedConsumerWiring(spec: Pick<ConsumerSpec, 'name' | 'fifo' | 'providers'>): ConsumerWiring {
  const config = consumerConfigFromEnv({ consumer: spec.name, fifo: spec.fifo, providers: spec.providers });
  const wiring = consumerWiring(config, {
    documents: dynamoDbDocumentClient(),
    sqs: sqsClient(),
  });
  // One consumer per process in Lambda; a test or the simulation loads several, each replacing the last
  // (set over the old ones, Powertools warns once per consumer). The service dimension is kept as it was.
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({
    service: process.env.POWERTOOLS_SERVICE_NAME || 'service_undefined',
    consumer: spec.name,
  });
  return wiring;
}

/**
 * What both queue consumers build at cold start: the ledger options (inbox
 * table and TTL), the providers, the message control for their own queue and
 * DLQ, the retry settings, and, in bundles built with fault injection only,
 * the fault decorators (faults/).
 *
 * @example
 * ```ts
 * // The simulation builds a consumer on one simulated invocation's parts
 * const wiring = consumerWiring(config, { documents: invocation.documents, sqs: invocation.sqs, now: clock.now });
 * ```
 */
export function consumerWiring(config: ConsumerConfig, deps: ConsumerDependencies) {
  const { consumer, fifo } = config;
  const { now } = deps;
  const contention = { ...IN_PROCESS_RETRY, isContention, sleep: deps.sleep, random: deps.random };
  // Dead code, dropped with the fault modules, in every bundle built without fault injection (bundleDefines, packages/cdk/src/function-defaults.ts).
  const faults = process.env.FAULT_INJECTION_BUILD === 'true' ? consumerFaults(consumer) : undefined;
  // The local runtime's test-only switch (faults/inbox-bypass.ts), read on every write: below the ledgers, on
  // the client they are built on, so no ledger knows of it. No deployable bundle has it: the condition is
  // false there, and the bundler drops the branch.
  const documents =
    process.env.INBOX_BYPASS_BUILD === 'true' && faults !== undefined
      ? withoutInbox(deps.documents, consumer, () => inboxClaimDisabled(faults.plan(), consumer))
      : deps.documents;

  const control = new SqsMessageControl(deps.sqs, {
    queueUrl: config.queueUrl,
    deadLetterQueueUrl: config.deadLetterQueueUrl,
    fifo,
  });
  const settings: ConsumerSettings = {
    consumer,
    control: faults?.control(control) ?? control,
    backoff: config.backoff,
    dedupeHorizonSeconds: config.dedupeHorizonSeconds,
    codeVersion: config.codeVersion,
    now: now ?? (() => new Date()),
    tryLimit: fifo
      ? {
          maxAttempts: config.maxAttempts,
          counter: new DynamoDbTryCounter(documents, {
            tableName: config.effectsTable,
            ttlSeconds: config.inboxTtlSeconds,
            now,
          }),
        }
      : undefined,
  };
  const ledgerOptions: LedgerOptions = {
    consumer,
    tableName: config.effectsTable,
    inboxTtlSeconds: config.inboxTtlSeconds,
    now,
    contention,
    ledger: config.ledger,
  };
  const provider =
    deps.provider ??
    ((name: string): ExternalProvider => {
      const configured = config.providers?.[name];
      if (configured === undefined) return new RecordingProvider(documents, config.providerTable, name, now);
      const apiKey =
        'file' in configured.apiKey
          ? apiKeyFromFile(configured.apiKey.file)
          : apiKeyFromParameter(configured.apiKey.parameter);
      return new HttpProvider({ name, endpoint: configured.endpoint, apiKey, refreshApiKey: apiKey.refresh, now });
    });

  return {
    documents,
    settings,
    ledgerOptions,
    /** The provider, behind the provider-outage fault where there is fault injection. */
    provider: (name: string): ExternalProvider => {
      const inner = provider(name);
      return faults?.provider(inner, name) ?? inner;
    },
    /** The use case, inside the consumer faults where there is fault injection. */
    withFaults: <E extends { eventId: string }>(apply: Apply<E>): Apply<E> => faults?.apply(apply) ?? apply,
    /** Re-reads the fault plan (cached for a few seconds) where there is fault injection; once per invocation. */
    refreshFaults: async (): Promise<void> => {
      await faults?.refresh();
    },
    setTimer: deps.setTimer ?? realTimer,
  };
}

/**
 * What a consumer's handler is built on: its documents client, settings, ledger options, providers and fault hooks.
 *
 * @example
 * ```ts
 * export function makeHandler(wiring: ConsumerWiring) {
 *   const ledger = new DynamoDbLoyaltyLedger(wiring.documents, wiring.ledgerOptions);
 *   const mail = wiring.provider('mail');
 *   return queueConsumerHandler(wiring, { fifo: false, parse: parseOrderEvent, apply: (event, _record, work) => credit(event, { ledger, mail }, work) });
 * }
 * ```
 */
export type ConsumerWiring = ReturnType<typeof consumerWiring>;

/** The local runtime's API key: read from its file once per container, and again after a 401. */
function apiKeyFromFile(file: string): RefreshableApiKey {
  let key: Promise<string> | undefined;
  const read = () => (key ??= readFile(file, 'utf8').then((text) => text.trim()));
  return Object.assign(read, { refresh: () => void (key = undefined) });
}

function realTimer(ms: number, fire: () => void): () => void {
  const timer = setTimeout(fire, Math.max(0, ms));
  // A deadline is no reason to keep a process alive: a record that ended without clearing it (its batch
  // threw) would otherwise hold a test worker, or a local function host stopping, for the whole timeout.
  timer.unref();
  return () => clearTimeout(timer);
}
