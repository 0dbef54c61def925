import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { MemoryDynamoDb } from '../memory-dynamodb';
import type { Scheduler } from './scheduler';
import { simulatedSqsClient, type SimQueue } from './sqs';

/** The process died: every later call of the same invocation fails, and its result is thrown away. */
export class SimulatedCrash extends Error {
  constructor(where: string) {
    super(`simulated crash ${where}`);
    this.name = 'SimulatedCrash';
  }
}

/**
 * The function ran past its timeout and Lambda stopped it: its result is lost
 * (as on a crash), and what it was awaiting never completes from its view.
 */
export class FunctionTimeout extends Error {
  constructor(name: string, seconds: number) {
    super(`${name} timed out after ${seconds} s`);
    this.name = 'FunctionTimeout';
  }
}

/**
 * What a call whose AbortSignal fired rejects with, as the SDK's and fetch's
 * aborted requests do: at once, whatever the call was doing. The request may
 * still have reached the service (see `io`).
 */
export class CallAborted extends Error {
  constructor(what: string) {
    super(`${what} aborted`);
    this.name = 'AbortError';
  }
}

export class ServiceUnavailable extends Error {
  constructor(what: string) {
    super(`${what} unavailable`);
    this.name = 'ServiceUnavailable';
  }
}

export interface InvocationFaults {
  /** Per call: chance the process dies at this await point (half before the call lands, half after). */
  crashPerCall: number;
  /** Per DynamoDB transaction: chance it is cancelled with TransactionConflict. */
  transactionConflict: number;
  /** Per SQS send: chance the call fails as a whole. */
  sqsSendFailure: number;
  /**
   * Per call of a function with a timeout: chance the call hangs past the
   * function's timeout (a slow dependency), so Lambda stops the function.
   */
  timeoutPerCall: number;
  /**
   * Per DynamoDB transaction: chance it commits but its answer is lost (a reset connection), and the
   * SDK sends the same request again, ClientRequestToken and all. Default 0.
   */
  sdkRetryOfCommit?: number;
  /** Guard switches (test-only): each transaction as the code without the guard would have sent it. */
  withoutGuards?: (input: TransactWriteCommand['input']) => TransactWriteCommand['input'];
}

/** A call the function sent before it was stopped (or before it aborted the call) lands (or not) at the service: a coin toss. */
const LANDS_AFTER_TIMEOUT = 0.5;

/** How one call through `io` may end early, and what it does at the service. */
export interface CallOptions<T> {
  /**
   * The call's AbortSignal (the record's deadline): aborted before the call is
   * sent, it is never sent; aborted while it is pending, the call rejects at
   * once with CallAborted, and what was sent may still land at the service.
   */
  signal?: AbortSignal;
  /**
   * The service keeps the call in flight this long after it acted (a provider
   * that answers after its work), drawn by the service from the call's result;
   * the caller's answer comes only then. Default: it answers at once.
   */
  answerAfterMs?: (result: T) => number;
}
/** Never settles: what an await of a stopped function sees. */
const NEVER = new Promise<never>(() => undefined);

/**
 * One function invocation (or one API request). Every call it makes to the
 * outside goes through `io`: the call completes after a random latency, on
 * the virtual clock, and the scheduler may crash the invocation at that await
 * point. A crash after the call landed is the classic "effect committed, ack
 * never sent". A call given an AbortSignal (the records' deadline) rejects at
 * once when it fires, as an aborted HTTP request does, so an aborted record's
 * work does not run on in the background; what it had sent may still land.
 */
export class Invocation {
  crashed = false;
  /** Stopped by its timeout: nothing it awaits completes any more. */
  timedOut = false;
  private documentsClient?: DynamoDBDocumentClient;
  private sqsClient?: SQSClient;
  /** Virtual ms at which Lambda stops the function (Infinity: no timeout, as for the API's simulated requests). */
  private readonly deadline: number;
  private deadlineArmed = false;
  private settled = false;
  private stopRun?: (error: FunctionTimeout) => void;
  /** Calls and waits still pending: a timer that fires with none pending cut nothing. */
  private pending = 0;
  /** Per AbortSignal, the pending calls to reject when it fires: one listener per signal, not one per call. */
  private readonly onAbort = new Map<AbortSignal, Set<() => void>>();

  constructor(
    readonly name: string,
    private readonly scheduler: Scheduler,
    private readonly db: MemoryDynamoDb,
    private readonly queues: ReadonlyMap<string, SimQueue>,
    private readonly faults: InvocationFaults,
    private readonly timeoutSeconds?: number,
  ) {
    this.deadline = timeoutSeconds === undefined ? Number.POSITIVE_INFINITY : scheduler.now + timeoutSeconds * 1000;
  }

  /** The invocation as Lambda runs it: the handler's outcome, or a FunctionTimeout when it is stopped first. */
  run<T>(handler: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.stopRun = reject;
      handler().then(
        (value) => {
          this.settled = true;
          resolve(value);
        },
        (error: unknown) => {
          this.settled = true;
          reject(error as Error);
        },
      );
    });
  }

  /**
   * Lambda stops the function at its deadline; armed only when something would
   * still be running then (most invocations end long before: no event for them).
   */
  private armDeadline(what: string): void {
    if (this.deadlineArmed) return;
    this.deadlineArmed = true;
    this.scheduler.at(this.deadline - this.scheduler.now, () => {
      if (this.settled || this.crashed) return;
      this.timedOut = true;
      this.scheduler.fault('timeout', `${this.name} stopped after ${this.timeoutSeconds} s (${what} still running)`);
      this.stopRun?.(new FunctionTimeout(this.name, this.timeoutSeconds ?? 0));
    });
  }

  io<T>(label: string, operation: () => T, options: CallOptions<T> = {}): Promise<T> {
    const scheduler = this.scheduler;
    const { signal } = options;
    if (this.timedOut) return NEVER;
    if (signal?.aborted === true) {
      // Aborted before it was sent: the SDK never sends it.
      scheduler.trace(`${this.name} ${label} not sent: aborted`);
      return Promise.reject(new CallAborted(label));
    }
    return new Promise<T>((resolve, reject) => {
      if (this.crashed) return reject(new SimulatedCrash(`${this.name} (already dead)`));
      let latency = scheduler.between(1, 25);
      if (this.deadline !== Number.POSITIVE_INFINITY) {
        if (scheduler.chance(this.faults.timeoutPerCall)) latency += this.deadline - scheduler.now;
        if (scheduler.now + latency > this.deadline) this.armDeadline(label);
      }
      // The caller's view: settled once (an answer, an error, or the abort, whichever is first).
      let done = false;
      this.pending += 1;
      const settle = () => {
        if (done) return false;
        done = true;
        this.pending -= 1;
        if (signal !== undefined) this.onAbort.get(signal)?.delete(abort);
        return true;
      };
      const abort = () => {
        if (!settle()) return;
        scheduler.trace(`${this.name} ${label} cut: its signal aborted`);
        reject(new CallAborted(label));
      };
      if (signal !== undefined) this.listen(signal, abort);
      scheduler.at(latency, () => {
        if (this.timedOut || done) {
          // The function is gone (or gave the call up); the request it had sent may still land at the service.
          if (!scheduler.chance(LANDS_AFTER_TIMEOUT)) return;
          const why = this.timedOut ? 'the function timed out' : 'its call was aborted';
          try {
            operation();
            scheduler.trace(`${this.name} ${label} landed after ${why}`);
          } catch (error) {
            scheduler.trace(`${this.name} ${label} landed after ${why} -> ${(error as Error).name}`);
          }
          return;
        }
        if (this.crashed) {
          settle();
          return reject(new SimulatedCrash(`${this.name} (already dead)`));
        }
        if (scheduler.chance(this.faults.crashPerCall / 2)) {
          settle();
          return reject(this.crash(`before ${label}`));
        }
        let result: T;
        try {
          result = operation();
        } catch (error) {
          scheduler.trace(
            `${this.name} ${label} -> ${(error as Error).name}: ${(error as Error).message.slice(0, 80)}`,
          );
          settle();
          return reject(error);
        }
        scheduler.trace(`${this.name} ${label} ok`);
        const answer = () => {
          if (this.timedOut || done) return; // stopped: never answered; aborted: rejected already
          settle();
          if (this.crashed) return reject(new SimulatedCrash(`${this.name} (already dead)`));
          if (scheduler.chance(this.faults.crashPerCall / 2)) return reject(this.crash(`after ${label}`));
          resolve(result);
        };
        const answerAfter = options.answerAfterMs?.(result) ?? 0;
        if (answerAfter <= 0) return answer();
        if (scheduler.now + answerAfter > this.deadline) this.armDeadline(label);
        scheduler.at(answerAfter, answer);
      });
    });
  }

  /** Registers a pending call's abort with its signal (one listener per signal and invocation). */
  private listen(signal: AbortSignal, abort: () => void): void {
    let calls = this.onAbort.get(signal);
    if (calls === undefined) {
      const registered = new Set<() => void>();
      calls = registered;
      this.onAbort.set(signal, registered);
      signal.addEventListener(
        'abort',
        () => {
          this.onAbort.delete(signal);
          for (const call of [...registered]) call();
        },
        { once: true },
      );
    }
    calls.add(abort);
  }

  /** A wait inside the invocation (in-process retries), on the virtual clock. */
  sleep(ms: number): Promise<void> {
    if (this.timedOut) return NEVER;
    if (this.scheduler.now + ms > this.deadline) this.armDeadline(`a ${ms} ms wait`);
    this.pending += 1;
    return new Promise((resolve) =>
      this.scheduler.at(ms, () => {
        this.pending -= 1;
        if (!this.timedOut) resolve();
      }),
    );
  }

  /**
   * A timer of the function's own (the records' deadline) on the virtual clock;
   * returns its cancel. It never fires in an invocation that crashed or was
   * stopped. Fired while calls or waits were pending, it is counted
   * (`record-deadline`): the deadline cut work short.
   */
  timer(ms: number, fire: () => void): () => void {
    let cancelled = false;
    this.scheduler.at(ms, () => {
      if (cancelled || this.crashed || this.timedOut) return;
      if (this.pending > 0)
        this.scheduler.count('record-deadline', `${this.name} deadline with ${this.pending} calls or waits pending`);
      fire();
    });
    return () => {
      cancelled = true;
    };
  }

  get documents(): DynamoDBDocumentClient {
    this.documentsClient ??= new SimulatedDocumentClient(this) as unknown as DynamoDBDocumentClient;
    return this.documentsClient;
  }

  /** One DocumentClient call of this invocation, at its await point (see `io`), aborted by `signal`. */
  sendDocument(command: unknown, signal?: AbortSignal): Promise<unknown> {
    return this.io(
      describeDynamoCommand(command),
      () => {
        if (!isTransaction(command)) return this.db.execute(command);
        if (this.scheduler.chance(this.faults.transactionConflict)) {
          this.scheduler.fault('transaction-conflict', `${this.name}`);
          throw MemoryDynamoDb.transactionConflict(transactionSize(command));
        }
        const { withoutGuards } = this.faults;
        const sent =
          withoutGuards === undefined
            ? command
            : new TransactWriteCommand(withoutGuards((command as TransactWriteCommand).input));
        const retried = (this.faults.sdkRetryOfCommit ?? 0) > 0 && this.scheduler.chance(this.faults.sdkRetryOfCommit!);
        if (!retried) return this.db.execute(sent);
        // Committed, the answer lost on the way back: the SDK's retry strategy sends the request again.
        this.db.execute(sent);
        this.scheduler.fault('sdk-retry-of-commit', this.name);
        return this.db.execute(sent);
      },
      { signal },
    );
  }

  get sqs(): SQSClient {
    this.sqsClient ??= simulatedSqsClient(this.queues, this);
    return this.sqsClient;
  }

  /** Whether this SQS send fails as a whole (the error to throw), drawn on the seed. */
  sqsSendFailure(queue: SimQueue): Error | undefined {
    if (!this.scheduler.chance(this.faults.sqsSendFailure)) return undefined;
    this.scheduler.fault('sqs-send-failure', `${this.name} -> ${queue.options.name}`);
    return new ServiceUnavailable(`SQS ${queue.options.name}`);
  }

  private crash(where: string): SimulatedCrash {
    this.crashed = true;
    this.scheduler.fault('crash', `${this.name} ${where}`);
    return new SimulatedCrash(`${this.name} ${where}`);
  }
}

interface CommandLike {
  constructor: { name: string };
  input: Record<string, unknown>;
}

function isTransaction(command: unknown): boolean {
  return command instanceof TransactWriteCommand;
}

function transactionSize(command: unknown): number {
  return ((command as CommandLike).input.TransactItems as unknown[]).length;
}

/**
 * The DocumentClient the adapters get: only `send` is used, with the SDK's
 * `abortSignal` option. A class, not an object literal of closures, so an
 * invocation creates no functions for it.
 */
class SimulatedDocumentClient {
  constructor(private readonly invocation: Invocation) {}

  send(command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown> {
    return this.invocation.sendDocument(command, options?.abortSignal);
  }
}

function keyOf(input: Record<string, unknown>): string {
  const key = (input.Key ?? input.Item) as Record<string, unknown> | undefined;
  return key === undefined ? '' : `${String(key.pk ?? key.idempotencyKey)}|${String(key.sk ?? '')}`;
}

function describeDynamoCommand(command: unknown): string {
  const { constructor, input } = command as CommandLike;
  const name = constructor.name;
  if (name === 'TransactWriteCommand') {
    const items = input.TransactItems as Record<string, Record<string, unknown>>[];
    let described = '';
    for (const item of items) {
      for (const kind in item) {
        described += `${described === '' ? '' : ', '}${kind} ${keyOf(item[kind])}`;
        break;
      }
    }
    return `TransactWrite[${described}]`;
  }
  if (name === 'QueryCommand') return `Query ${String(input.IndexName ?? input.TableName)}`;
  return `${name.replace('Command', '')} ${keyOf(input)}`;
}
