import type { ConsumerSpec } from '../lambdas/exactly-once/consumer-spec';
import { tooling } from '../lambdas/example';

/**
 * What a tool may know of the example's domain, given by the example (`lambdas/example.ts`, one
 * module the example owns): a tool reads the domain from {@link EXAMPLE} and from nothing else of
 * the example. The DLQ tool, the stack helpers and the scaffolder take everything they know from here.
 */
export interface ExampleTooling {
  /** The consumers, as the stack deploys them: their queues, DLQs and outputs are found by their names. */
  readonly consumers: readonly ConsumerSpec[];
  /**
   * Whether a message body is one of the example's events as its consumers read them: anything
   * else a consumer refuses as SchemaViolation (poison), whatever the DLQ message's attributes say.
   */
  isEvent(body: string): boolean;
  /**
   * Where `npm run new:consumer` writes a consumer: `folder` (under lambdas/, holding `consumers.ts`
   * with the marker line and `consumerSpec`, and `entry-points/`, `use-cases/`, `aws/`), and the event
   * types the producers write (a FIFO consumer takes them all, a standard one the first).
   */
  readonly scaffold: { readonly folder: string; readonly eventTypes: readonly string[] };
}

/** The example's tooling, checked against the contract here, where the tools read it. */
export const EXAMPLE: ExampleTooling = tooling;
