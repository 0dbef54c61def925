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
}

/**
 * One function invocation (or one API request). Every call it makes to the
 * outside goes through `io`: the call completes after a random latency, on
 * the virtual clock, and the scheduler may crash the invocation at that await
 * point. A crash after the call landed is the classic "effect committed, ack
 * never sent".
 */
export class Invocation {
  crashed = false;
  private documentsClient?: DynamoDBDocumentClient;
  private sqsClient?: SQSClient;

  constructor(
    readonly name: string,
    private readonly scheduler: Scheduler,
    private readonly db: MemoryDynamoDb,
    private readonly queues: ReadonlyMap<string, SimQueue>,
    private readonly faults: InvocationFaults,
  ) {}

  io<T>(label: string, operation: () => T): Promise<T> {
    const scheduler = this.scheduler;
    return new Promise<T>((resolve, reject) => {
      if (this.crashed) return reject(new SimulatedCrash(`${this.name} (already dead)`));
      scheduler.at(scheduler.between(1, 25), () => {
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
    return new Promise((resolve) => this.scheduler.at(ms, resolve));
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
