import type { MemoryDynamoDb } from '../memory-dynamodb';
import { AuditWatch } from './audit-watch';
import type { SimulationOptions } from './options';
import type { DomainClients, SimulationDomain } from './port';
import type { SimProviders } from './provider';
import type { Releases } from './releases';
import type { Scheduler } from './scheduler';
import { SimQueue } from './sqs';

/**
 * The engine's own state, which its parts (the harness, the faults, the operator, the audit) share and
 * a plug-in never sees: a domain's clients get the World, whose port is its public members.
 */
export class EngineState<O extends SimulationOptions = SimulationOptions> {
  /** Outbox items not yet dispatched (the drain check waits for none). */
  pendingOutbox = 0;
  /** The run is over: pollers, sweeps and TTL sweeps stop. */
  stopped = false;
  readonly watch: AuditWatch;
  /** Every simulated queue by URL (each invocation's SQS client reaches them by it). */
  readonly queues = new Map<string, SimQueue>();
  /** Which release each consumer invocation runs (the deploy and rollback faults); set once the consumers are. */
  releases!: Releases;
  /** The domain's clients on this world; set last, when the world is whole. */
  clients!: DomainClients;

  constructor(
    private readonly scheduler: Scheduler,
    readonly db: MemoryDynamoDb,
    readonly domain: SimulationDomain<O>,
    readonly providers: SimProviders,
  ) {
    this.watch = new AuditWatch(db);
  }

  /** A simulated queue of this world. */
  queue(options: ConstructorParameters<typeof SimQueue>[1]): SimQueue {
    const queue = new SimQueue(this.scheduler, options);
    this.queues.set(queue.url, queue);
    return queue;
  }
}
