import { GetQueueAttributesCommand, SendMessageCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { example, proofDomain } from '../example';
import type { FaultPlan } from '@exactly-once/runtime/faults/plan';
import { DEFAULT_PROVIDER_TIMEOUT_MS } from '@exactly-once/runtime/aws/http-provider';
import type { ProviderChaosPlan } from '../local-runtime/provider';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { seeded } from '@exactly-once/runtime/runtime/random';
import { redrive } from '../dlq/messages';
import { discoverDeadLetterQueues } from '../dlq/queues';
import { ENTITY_OUTBOX } from '@exactly-once/runtime/aws/outbox-table';
import { consumerQueueUrls, requiredOutput } from '../stack';
import { setLocalProviderChaos } from './provider-calls';
import type { Target } from './target';
import type { ProducedEvent } from './verify';
import type { ProofDomain } from './domain';
import type { PlannedRequest } from './plan';

/**
 * The fault switch per run: locally a file every function re-reads, on AWS the
 * stack's SSM parameter. Faults inside the functions come from the plan; the
 * kit itself adds poison messages and a DLQ redrive step.
 */
export type FaultName =
  | 'crash'
  | 'slow'
  | 'transient'
  | 'poison'
  | 'relay-crash'
  | 'resend'
  | 'clock-skew'
  | 'redrive'
  | 'provider-outage'
  | ProviderChaosFault
  | AdversarialFault;
/**
 * Faults that are attacks or producer bugs, not infrastructure failures: never in `all`, asked for by
 * name. Each leaves findings for a person in the verdict, never a pass:
 * - `reused-id`: after the load, copies of this run's applied events with other content under the
 *   same eventId (a producer reusing an id, or a forger) go to the consumers' queues. Each must end
 *   in a DLQ as EventIdReused;
 * - `forged-first`: before the load, for some of its creates (the last: forgedCreates), a copy of the event the create will
 *   produce, with other content, goes to the consumers first (a forger who got past the queues'
 *   sender policy). The forged copy is applied in the real one's place (not guaranteed: only the
 *   policy prevents it); the real one must end in a DLQ as EventIdReused, and the verdict reports
 *   the claim that holds another event's content (`event-replaced`);
 * - `clock-skew-beyond`: the relay stamps some events {@link CLOCK_SKEW_BEYOND_SECONDS} ahead, past
 *   the consumers' margin: each must be refused (OccurredInFuture), never applied.
 */
export type AdversarialFault = 'reused-id' | 'forged-first' | 'clock-skew-beyond';
export const ADVERSARIAL_FAULTS: readonly AdversarialFault[] = ['reused-id', 'forged-first', 'clock-skew-beyond'];

/** `clock-skew`: the relay stamps some events this far ahead, inside the consumers' 300 s margin: nothing may change. */
export const CLOCK_SKEW_WITHIN_SECONDS = 240;
/** `clock-skew-beyond`: a day ahead, far past the margin. */
export const CLOCK_SKEW_BEYOND_SECONDS = 86_400;
/** The faults the local provider serves on the wire: a target needs one (`npm start` starts it). */
export type ProviderChaosFault = 'answer-lost' | 'slow-answer' | 'rate-limited' | 'server-errors' | 'keys-forgotten';
export const PROVIDER_CHAOS_FAULTS: readonly ProviderChaosFault[] = [
  'answer-lost',
  'slow-answer',
  'rate-limited',
  'server-errors',
  'keys-forgotten',
];
export const ALL_FAULTS: FaultName[] = [
  'crash',
  'slow',
  'transient',
  'poison',
  'relay-crash',
  'resend',
  'clock-skew',
  'redrive',
  'provider-outage',
  ...PROVIDER_CHAOS_FAULTS,
];

/**
 * The per-fault rates `--faults all` runs with, over `--fault-rate`. The relay crash is rolled once per
 * relay invocation that dispatched something new, and a smoke run's events reach the relay in a few
 * invocations (2 in ours): at 0.1 it would fire in about one run in five. At 1 every such invocation crashes
 * once, after sending and before the stream checkpoint, and its retry, with nothing new to dispatch, goes
 * through. Named alone, each fault runs at `--fault-rate`.
 */
export const ALL_FAULTS_RATES: Readonly<Partial<Record<FaultName, number>>> = { 'relay-crash': 1 };

/**
 * How late the `slow-answer` fault answers: past the HTTP provider's own cap on one call, so the
 * caller gives up while the provider still runs the key (its retry meets 409, then the stored answer).
 */
export const SLOW_ANSWER_MS = DEFAULT_PROVIDER_TIMEOUT_MS + 1_000;
/** Requests in a row one `server-errors` burst answers 503. */
export const SERVER_ERROR_BURST_REQUESTS = 3;

export interface FaultSettings {
  enabled: FaultName[];
  /** Probability per message/record for the in-function faults. */
  rate: number;
  /** Per-fault probabilities that override `rate` for those faults (the relay crash at 1 beside others at 0.3). */
  rates?: Partial<Record<FaultName, number>>;
  /** How long the slow handler sleeps (longer than the queue's visibility timeout in the fault runs). */
  slowSeconds: number;
  /** Poison messages sent to each source queue. */
  poisonPerQueue: number;
  /** TEST ONLY: consumers whose inbox claim is switched off (proves the verification can fail). */
  disableInboxClaim?: string[];
  /**
   * Local target only: the source queues' visibility timeout during the run, in
   * seconds (0 = as deployed). Shorter than deployed on purpose: a crashed batch
   * comes back in seconds instead of minutes, and the slow fault can outlive it.
   */
  localVisibilitySeconds?: number;
  /** How long the providers are down in one window of the `provider-outage` fault (default 10 s). */
  providerOutageSeconds?: number;
  /**
   * Every consumer try fails (transiently) for this many seconds after the plan
   * is switched on and read, then the outage ends: the retry budget must
   * outlast it, with nothing dead-lettered. Off when unset or 0.
   */
  consumerOutageSeconds?: number;
}

/**
 * The outage window the functions keep when no local provider serves it (a deployed stack): it opens a
 * seeded 0-5 s after every function has re-read the plan (so it falls inside the load) and lasts
 * `providerOutageSeconds`. Wall-clock instants, so every process sees the same window.
 */
export function providerOutageWindow(
  settings: FaultSettings,
  seed: number | undefined,
  now: Date,
): { from: string; until: string } {
  const offsetMs = Math.floor((seed === undefined ? Math.random() : seeded(seed)()) * 5_000);
  const from = now.getTime() + FAULT_SWITCH_DELAY_MS + offsetMs;
  const until = from + (settings.providerOutageSeconds ?? 10) * 1000;
  return { from: new Date(from).toISOString(), until: new Date(until).toISOString() };
}

/**
 * The plan inside the functions. `outageAtTheProvider`: the local provider serves the outage window
 * on the wire (503 with Retry-After, {@link providerChaosOf}), so the functions keep only the share of
 * calls that fail before they are sent; without one (AWS) the functions fail the window's calls too.
 */
export function faultPlanOf(
  settings: FaultSettings,
  seed?: number,
  now = new Date(),
  options: { outageAtTheProvider?: boolean } = {},
): FaultPlan {
  const on = (name: FaultName) => settings.enabled.includes(name);
  const rateOf = (name: FaultName) => (on(name) ? (settings.rates?.[name] ?? settings.rate) : undefined);
  return {
    providerOutage: rateOf('provider-outage'),
    providerOutageWindow:
      on('provider-outage') && options.outageAtTheProvider !== true
        ? providerOutageWindow(settings, seed, now)
        : undefined,
    seed,
    crashAfterEffect: rateOf('crash'),
    slowHandler: rateOf('slow'),
    slowHandlerSeconds: on('slow') ? settings.slowSeconds : undefined,
    transientError: rateOf('transient'),
    relayCrashAfterPublish: rateOf('relay-crash'),
    producerResend: rateOf('resend'),
    // Beyond the margin wins when both are on: its events are the ones a person must see.
    clockSkew: rateOf('clock-skew-beyond') ?? rateOf('clock-skew'),
    clockSkewSeconds: on('clock-skew-beyond')
      ? CLOCK_SKEW_BEYOND_SECONDS
      : on('clock-skew')
        ? CLOCK_SKEW_WITHIN_SECONDS
        : undefined,
    disableInboxClaim: settings.disableInboxClaim,
    ...consumerOutageOf(settings, now),
  };
}

/**
 * The local provider's chaos for a run, from the same settings and seed as the functions' plan:
 * `answer-lost` (performed, then the connection closed unanswered), `slow-answer` ({@link SLOW_ANSWER_MS}
 * late), `rate-limited` (429, Retry-After 1), `server-errors` (bursts of {@link SERVER_ERROR_BURST_REQUESTS}
 * 503s), each at its rate, and `provider-outage`'s window as 503s with Retry-After, `providerOutageSeconds`
 * long from the first provider call of the run: timed by the clock from the load's start, it could close on a
 * cold runtime before any call came, and the run would prove nothing about it. `keys-forgotten` is not
 * in the plan: the kit makes the provider forget its keys before the redrive ({@link forgetsKeys}).
 * Empty when none of these faults is on.
 */
export function providerChaosOf(settings: FaultSettings, seed?: number): ProviderChaosPlan {
  const on = (name: FaultName) => settings.enabled.includes(name);
  const rateOf = (name: FaultName) => settings.rates?.[name] ?? settings.rate;
  const plan: ProviderChaosPlan = {};
  // Each fires on the first request it can, then at its rate: a run that enables a fault always sees it.
  if (on('answer-lost')) plan.dropAnswer = { count: 1, probability: rateOf('answer-lost') };
  if (on('slow-answer')) plan.slowAnswer = { count: 1, probability: rateOf('slow-answer'), delayMs: SLOW_ANSWER_MS };
  if (on('rate-limited')) plan.rateLimit = { count: 1, probability: rateOf('rate-limited'), retryAfterSeconds: 1 };
  // A burst is several 503s (the first starts with the next request): started at a third of the rate,
  // about as many requests fail as the rate says.
  if (on('server-errors'))
    plan.serverErrorBurst = {
      requests: SERVER_ERROR_BURST_REQUESTS,
      probability: rateOf('server-errors') / SERVER_ERROR_BURST_REQUESTS,
      retryAfterSeconds: 1,
    };
  if (on('provider-outage'))
    plan.outage = { forMs: (settings.providerOutageSeconds ?? 10) * 1000, mode: 'unavailable' };
  return Object.keys(plan).length === 0 ? plan : { ...(seed === undefined ? {} : { seed }), ...plan };
}

/** Whether the run makes the local provider forget its keys before the redrive (`keys-forgotten`). */
export const forgetsKeys = (settings: FaultSettings): boolean => settings.enabled.includes('keys-forgotten');

/** The outage ends `consumerOutageSeconds` after every function has re-read the plan. */
function consumerOutageOf(settings: FaultSettings, now: Date): Pick<FaultPlan, 'consumerOutageUntil'> {
  const seconds = settings.consumerOutageSeconds ?? 0;
  if (seconds <= 0) return {};
  return { consumerOutageUntil: new Date(now.getTime() + FAULT_SWITCH_DELAY_MS + seconds * 1000).toISOString() };
}

/** A plan set without an expiry (tests, by hand) turns itself off after this long. */
export const DEFAULT_PLAN_LIFETIME_MS = 15 * 60 * 1000;

/**
 * Writes the plan to the target's switch. A plan always carries an expiry
 * (functions ignore one without): `DEFAULT_PLAN_LIFETIME_MS` unless it has its own.
 * No faults on a target without a switch is a no-op; faults there are refused.
 */
export async function setFaultPlan(target: Target, plan: FaultPlan): Promise<void> {
  const empty = Object.values(plan).every((v) => v === undefined);
  if (target.faultSwitch === undefined) {
    if (empty) return;
    throw new Error(noFaultSwitch(target));
  }
  const expiring = empty
    ? {}
    : { ...plan, expiresAt: plan.expiresAt ?? new Date(Date.now() + DEFAULT_PLAN_LIFETIME_MS).toISOString() };
  const json = JSON.stringify(expiring);
  if ('file' in target.faultSwitch) {
    fs.mkdirSync(path.dirname(target.faultSwitch.file), { recursive: true });
    fs.writeFileSync(target.faultSwitch.file, json);
  } else {
    const ssm = new SSMClient({});
    await ssm.send(
      new PutParameterCommand({ Name: target.faultSwitch.parameterName, Value: json, Overwrite: true, Type: 'String' }),
    );
    ssm.destroy();
  }
}

/** How long functions may keep using an old plan (their cache period), plus a margin. */
export const FAULT_SWITCH_DELAY_MS = 6_000;

export function poisonBody(runId: string, n: number): string {
  return JSON.stringify({
    poison: true,
    runId,
    n,
    note: 'not an event of the domain: must end in the DLQ with failureCause SchemaViolation',
  });
}

/**
 * Sends `perQueue` poison messages to every consumer's source queue (every
 * consumer of the list). Returns how many were sent.
 */
export async function sendPoison(
  target: Target,
  runId: string,
  perQueue: number,
  consumers: readonly ConsumerSpec[] = example().consumers,
): Promise<number> {
  const queues = consumerQueueUrls(target.outputs, consumers);
  let sent = 0;
  for (let n = 0; n < perQueue; n++) {
    for (const { consumer, queueUrl } of queues) {
      const id = `poison-${runId}-${n}`;
      await sendMessage(target, consumer, queueUrl, poisonBody(runId, n), { groupId: id, deduplicationId: id });
      sent += 1;
    }
  }
  return sent;
}

/** One message; on a FIFO queue with its group and deduplication id (SQS refuses a FIFO message without a group). */
async function sendMessage(
  target: Target,
  consumer: ConsumerSpec,
  queueUrl: string,
  body: string,
  fifo: { groupId: string; deduplicationId: string },
): Promise<void> {
  await target.sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      ...(consumer.fifo ? { MessageGroupId: fifo.groupId, MessageDeduplicationId: fifo.deduplicationId } : {}),
    }),
  );
}

/**
 * Makes the redrive step meaningful: copies of events this run already
 * delivered are put in the DLQs, as if their effects had committed and every
 * ack had then been lost until maxReceiveCount. Redriving them must not apply
 * anything twice. Returns how many were seeded.
 */
export async function seedDeadLetters(
  target: Target,
  runId: string,
  count: number,
  consumers: readonly ConsumerSpec[] = example().consumers,
): Promise<number> {
  const events = (await runEvents(target, runId)).slice(0, count);
  for (const event of events) {
    const { eventId, entityId } = outboxEventKeys(event);
    // Into the DLQ of every consumer that takes the event, as the relay would have routed it.
    await sendToItsConsumers(target, consumers, 'deadLetterQueueUrl', event, {
      groupId: entityId,
      deduplicationId: `dlq-seed-${eventId}`,
    });
  }
  return events.length;
}

/** `event` to the queue (or DLQ) of every consumer that takes its type; how many were sent. */
async function sendToItsConsumers(
  target: Target,
  consumers: readonly ConsumerSpec[],
  which: 'queueUrl' | 'deadLetterQueueUrl',
  event: Record<string, unknown>,
  fifo: { groupId: string; deduplicationId: string },
): Promise<number> {
  const { type } = outboxEventKeys(event);
  const takers = consumerQueueUrls(target.outputs, consumers).filter((q) => q.consumer.eventTypes.includes(type));
  for (const queue of takers) await sendMessage(target, queue.consumer, queue[which], JSON.stringify(event), fifo);
  return takers.length;
}

/**
 * The `reused-id` fault: for `count` of this run's events already relayed, a copy with the same
 * eventId and other content (another entity id) to every consumer queue that
 * takes it, as a producer reusing an id, or a forger who got past the queue policy, would send it.
 * Sent after the load drained, so each consumer has applied the real event first: the copy must be
 * dead-lettered as EventIdReused, never acknowledged as a duplicate. Returns the copies sent.
 */
export async function sendReusedIds(
  target: Target,
  runId: string,
  count: number,
  consumers: readonly ConsumerSpec[] = example().consumers,
): Promise<number> {
  const events = (await runEvents(target, runId)).slice(0, count);
  let sent = 0;
  for (const event of events) {
    const { eventId, entityId } = outboxEventKeys(event);
    // Another entity under the same id: a field every consumer reads (a payload field its schema does
    // not know would be dropped by its parse, and the copy would rightly be the same event).
    const reused = { ...event, entityId: `${entityId}-reused` };
    sent += await sendToItsConsumers(target, consumers, 'queueUrl', reused, {
      groupId: `${entityId}-reused`,
      deduplicationId: `${eventId}.reused`,
    });
  }
  return sent;
}

/**
 * The creates of the plan whose events the `forged-first` fault forges: the last `count` that build a
 * forged event. Not the first: they meet a cold runtime (functions starting, DynamoDB Local's JVM
 * warming up), and one that is never answered 201 produces no real event for its forged copy to stand
 * in for, so the run would show no replaced claim (seen on the probe app: 18 of 20 creates accepted,
 * the forged one among the two that were not, and no finding at all).
 *
 * @example
 * ```ts
 * const targets = forgedCreates(plan, 2, domain); // the plan's last two creates
 * ```
 */
export function forgedCreates(
  plan: readonly PlannedRequest[],
  count: number,
  domain: Pick<ProofDomain, 'forgedCreateEvent'>,
): PlannedRequest[] {
  const forge = domain.forgedCreateEvent;
  if (forge === undefined) return [];
  const chosen: PlannedRequest[] = [];
  // Distinct keys: a retry of a create produces the same event, which needs one forged copy.
  const keys = new Set<string>();
  for (let i = plan.length - 1; i >= 0 && chosen.length < count; i--) {
    const request = plan[i];
    const key = `${request.caller}\n${request.idempotencyKey}`;
    if (keys.has(key) || forge(request, new Date(0).toISOString()) === undefined) continue;
    keys.add(key);
    chosen.unshift(request);
  }
  return chosen;
}

/**
 * The `forged-first` fault, before the load: for `count` creates of the plan (forgedCreates: the last
 * ones), the event each will produce (its id derives from the caller and the key) with other content
 * goes to every consumer queue that takes it, under a deduplication id of its own, as a forger who got
 * past the queues' sender policy would send it. The forged copy is applied in the real one's place
 * (only the policy prevents that); the real one must end in a DLQ as EventIdReused. Returns the copies sent.
 */
export async function sendForgedFirst(
  target: Target,
  plan: readonly PlannedRequest[],
  count: number,
  domain: ProofDomain = proofDomain(),
  consumers: readonly ConsumerSpec[] = example().consumers,
): Promise<number> {
  const forge = domain.forgedCreateEvent;
  if (forge === undefined)
    throw new Error(`forged-first: the ${domain.entityNounSingular} domain builds no forged event (forgedCreateEvent)`);
  let sent = 0;
  for (const request of forgedCreates(plan, count, domain)) {
    const forged = forge(request, new Date().toISOString())!;
    sent += await sendToItsConsumers(
      target,
      consumers,
      'queueUrl',
      { ...forged },
      {
        groupId: forged.entityId,
        deduplicationId: `${forged.eventId}.forged`,
      },
    );
  }
  return sent;
}

/** This run's events, from the outbox items: the plan puts the run id in every request body. */
async function runEvents(target: Target, runId: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await target.dynamodb.send(
    new ScanCommand({
      TableName: requiredOutput(target.outputs, example().outboxTableOutput),
      FilterExpression: 'entity = :outbox',
      ExpressionAttributeValues: { ':outbox': { S: ENTITY_OUTBOX } },
    }),
  );
  return Items.map((item) => unmarshall(item).event as Record<string, unknown>).filter((event) =>
    JSON.stringify(event).includes(`"${runId}-`),
  );
}

/**
 * The id, type and entity of an outbox item's event: the envelope's fields,
 * or, on an event written before the envelope, `eventType` and `orderId`.
 */
export function outboxEventKeys(event: Record<string, unknown>): ProducedEvent {
  return {
    eventId: String(event.eventId),
    type: String(event.type ?? event.eventType),
    entityId: String(event.entityId ?? event.orderId),
  };
}

/**
 * The operator's recovery, with the DLQ tool's own redrive (npm run dlq):
 * every consumer DLQ of the stack, this run's messages only (on a shared stack
 * the others are someone else's to judge), poison left where it belongs. A
 * message SQS moved after maxReceiveCount carries no cause, so poison is also
 * recognised by its body. Returns how many moved.
 */
export async function redriveDeadLetters(
  target: Target,
  isPoison: (body: string) => boolean,
  isThisRuns: (body: string) => boolean = () => true,
): Promise<number> {
  let moved = 0;
  for (const queue of discoverDeadLetterQueues(target.outputs).filter((q) => q.kind === 'consumer')) {
    const result = await redrive(target.sqs, queue, {
      max: 0,
      all: true,
      select: (message) => !isPoison(message.body) && isThisRuns(message.body),
      waitSeconds: 1,
    });
    moved += result.moved.length;
  }
  return moved;
}

/**
 * Local fault runs shorten every consumer's source queue's visibility timeout, breaking the
 * synth-time rule on purpose and restoring it afterwards: a batch lost to an
 * injected crash comes back in seconds, not minutes, and the slow-handler fault
 * can outlive its visibility as it is meant to (a conforming deployment makes
 * that impossible: visibility >= 6 x the function timeout). On AWS the slow fault
 * only bites with --slow-seconds above the consumer timeout (30 s): the handler
 * then runs into its own timeout and the batch is redelivered. Returns the restore function.
 */
export async function setLocalVisibility(
  target: Target,
  seconds: number,
  consumers: readonly ConsumerSpec[] = example().consumers,
): Promise<() => Promise<void>> {
  const urls = consumerQueueUrls(target.outputs, consumers).map((q) => q.queueUrl);
  const original = await Promise.all(
    urls.map(async (url) => {
      const { Attributes = {} } = await target.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout'] }),
      );
      return Attributes.VisibilityTimeout ?? '30';
    }),
  );
  await Promise.all(
    urls.map((url) =>
      target.sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: String(seconds) } }),
      ),
    ),
  );
  return async () => {
    await Promise.all(
      urls.map((url, i) =>
        target.sqs.send(
          new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: original[i] } }),
        ),
      ),
    );
  };
}

/**
 * How long a run's plan lives: the load (at a pessimistic 20 requests a second),
 * both drains (before and after the redrive) and a 5-minute margin. The kit
 * switches the plan off when the run ends; the expiry only stops a plan whose
 * kit died. A run that outlasts it finishes without faults, and still verifies.
 */
export function faultPlanLifetimeMs(profile: { drainTimeoutMs: number }, requests: number): number {
  return Math.ceil(requests / 20) * 1000 + 2 * profile.drainTimeoutMs + 5 * 60 * 1000;
}

/** Whether the run needs the functions' fault switch (poison, redrive, reused-id and forged-first are sent by the kit itself). */
export function needsFaultSwitch(settings: FaultSettings): boolean {
  const byTheKit: readonly FaultName[] = ['poison', 'redrive', 'reused-id', 'forged-first', ...PROVIDER_CHAOS_FAULTS];
  return (
    settings.enabled.some((f) => !byTheKit.includes(f)) ||
    (settings.disableInboxClaim?.length ?? 0) > 0 ||
    (settings.consumerOutageSeconds ?? 0) > 0
  );
}

function noFaultSwitch(target: Target): string {
  return `Stack ${target.name} has no fault switch (no FaultParameterName output): in-function faults need a stack deployed with -c faultInjection=true (never prod); run without them, or with only poison,redrive,reused-id,forged-first`;
}

/**
 * Switches a run's faults on: the in-function plan (then waits until every
 * function has re-read it) and, locally, the shortened visibility. `off()` puts
 * both back and is safe to call more than once (after the drain, in a finally,
 * on Ctrl-C).
 */
export async function switchFaultsOn(
  target: Target,
  settings: FaultSettings,
  seed: number,
  log: (line: string) => void,
  lifetimeMs: number = DEFAULT_PLAN_LIFETIME_MS,
): Promise<{ inFunction: boolean; off(): Promise<void> }> {
  const inFunction = needsFaultSwitch(settings);
  const localProvider = target.outputs.LocalProviderUrl !== undefined;
  // Refused before anything changes: the run would report faults that never happened.
  if (inFunction && target.faultSwitch === undefined) throw new Error(noFaultSwitch(target));
  const onTheWire = settings.enabled.filter((f) => (PROVIDER_CHAOS_FAULTS as readonly string[]).includes(f));
  if (onTheWire.length > 0 && !localProvider)
    throw new Error(
      `Stack ${target.name} has no local provider: ${onTheWire.join(', ')} are served by the local provider (npm start), which the kit cannot put in front of a real one`,
    );
  const now = new Date();
  const chaos = localProvider ? providerChaosOf(settings, seed) : {};
  const chaosOn = Object.keys(chaos).length > 0;
  const visibility = settings.localVisibilitySeconds ?? 0;
  const restoreVisibility =
    inFunction && target.kind === 'local' && visibility > 0
      ? await setLocalVisibility(target, visibility)
      : async () => undefined;
  let on = true;
  const off = async () => {
    if (!on) return;
    on = false;
    await setFaultPlan(target, {});
    if (chaosOn) await setLocalProviderChaos(target.outputs, {});
    await restoreVisibility();
  };
  // A kit that dies mid-run leaves a plan that stops by itself: after the run, its drains and a margin.
  const plan = {
    ...faultPlanOf(settings, seed, now, { outageAtTheProvider: chaos.outage !== undefined }),
    expiresAt: new Date(now.getTime() + lifetimeMs).toISOString(),
  };
  await setFaultPlan(target, inFunction ? plan : {});
  if (chaosOn) {
    await setLocalProviderChaos(target.outputs, chaos);
    log(`Local provider chaos switched on: ${JSON.stringify(chaos)}`);
  }
  if (inFunction) {
    log(`Fault plan switched on: ${JSON.stringify(plan)}`);
    await new Promise((r) => setTimeout(r, FAULT_SWITCH_DELAY_MS)); // every function has re-read the switch
  }
  return { inFunction, off };
}
