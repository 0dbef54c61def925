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
}

/** A call the function sent before it was stopped lands (or not) at the service: a coin toss. */
const LANDS_AFTER_TIMEOUT = 0.5;
/** Never settles: what an await of a stopped function sees. */
const NEVER = new Promise<never>(() => undefined);

/**
 * One function invocation (or one API request). Every call it makes to the
 * outside goes through `io`: the call completes after a random latency, on
 * the virtual clock, and the scheduler may crash the invocation at that await
 * point. A crash after the call landed is the classic "effect committed, ack
 * never sent".
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

  io<T>(label: string, operation: () => T): Promise<T> {
    const scheduler = this.scheduler;
    if (this.timedOut) return NEVER;
    return new Promise<T>((resolve, reject) => {
      if (this.crashed) return reject(new SimulatedCrash(`${this.name} (already dead)`));
      let latency = scheduler.between(1, 25);
      if (this.deadline !== Number.POSITIVE_INFINITY) {
        if (scheduler.chance(this.faults.timeoutPerCall)) latency += this.deadline - scheduler.now;
        if (scheduler.now + latency > this.deadline) this.armDeadline(label);
      }
      scheduler.at(latency, () => {
        if (this.timedOut) {
          // The function is gone; the request it had sent may still land at the service.
          if (!scheduler.chance(LANDS_AFTER_TIMEOUT)) return;
          try {
            operation();
            scheduler.trace(`${this.name} ${label} landed after the function timed out`);
          } catch (error) {
            scheduler.trace(`${this.name} ${label} landed after the function timed out -> ${(error as Error).name}`);
          }
          return;
        }
        if (this.crashed) return reject(new SimulatedCrash(`${this.name} (already dead)`));
        if (scheduler.chance(this.faults.crashPerCall / 2)) return reject(this.crash(`before ${label}`));
        let result: T;
        try {
          result = operation();
        } catch (error) {
          scheduler.trace(
            `${this.name} ${label} -> ${(error as Error).name}: ${(error as Error).message.slice(0, 80)}`,
          );
          return reject(error);
        }
        scheduler.trace(`${this.name} ${label} ok`);
        if (scheduler.chance(this.faults.crashPerCall / 2)) return reject(this.crash(`after ${label}`));
        resolve(result);
      });
    });
  }

  /** A wait inside the invocation (in-process retries), on the virtual clock. */
  sleep(ms: number): Promise<void> {
    if (this.timedOut) return NEVER;
    if (this.scheduler.now + ms > this.deadline) this.armDeadline(`a ${ms} ms wait`);
    return new Promise((resolve) =>
      this.scheduler.at(ms, () => {
        if (!this.timedOut) resolve();
      }),
    );
  }

  get documents(): DynamoDBDocumentClient {
    this.documentsClient ??= new SimulatedDocumentClient(this) as unknown as DynamoDBDocumentClient;
    return this.documentsClient;
  }

  /** One DocumentClient call of this invocation, at its await point (see `io`). */
  sendDocument(command: unknown): Promise<unknown> {
    return this.io(describeDynamoCommand(command), () => {
      if (isTransaction(command) && this.scheduler.chance(this.faults.transactionConflict)) {
        this.scheduler.fault('transaction-conflict', `${this.name}`);
        throw MemoryDynamoDb.transactionConflict(transactionSize(command));
      }
      return this.db.execute(command);
    });
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
 * The DocumentClient the adapters get: only `send` is used. A class, not an
 * object literal of closures, so an invocation creates no functions for it.
 */
class SimulatedDocumentClient {
  constructor(private readonly invocation: Invocation) {}

  send(command: unknown): Promise<unknown> {
    return this.invocation.sendDocument(command);
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
