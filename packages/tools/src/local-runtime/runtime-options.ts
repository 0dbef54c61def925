import type { ExampleTooling } from '../domain';
import type { DeliveryCounts } from './host/delivery-evidence';
import type { Logger } from './log';

// The runtime's options and counters, apart from runtime.ts: its start steps (start-steps.ts) read them,
// and runtime.ts runs those steps, so a type-only import back would close a circle.

export interface RuntimeOptions {
  /** The cloud assembly folder (`cdk.out`). */
  cdkOut: string;
  /**
   * The domain the stack runs, as the entry point loaded it: the local provider serves the providers its
   * consumers name, as its `localProviders` describes them.
   */
  domain: Pick<ExampleTooling, 'consumers' | 'localProviders'>;
  stackName?: string;
  /** API port; 0 picks a free one. */
  port: number;
  log: Logger;
  /** Shortens schedules and async retry delays (tests). */
  timeScale?: number;
  alarmIntervalMs?: number;
  /** Environments per function without reserved concurrency. */
  maxConcurrency?: number;
  /** Show Powertools' embedded-metric lines (hidden by default: on AWS they become metrics, not logs). */
  showMetrics?: boolean;
  /** Show the functions' span lines, one per hop per order (hidden by default; collected either way). */
  showSpans?: boolean;
  /** Where to write the outputs file; undefined writes none. */
  outputsFile?: string;
  /** Set as FAULT_INJECTION_FILE on every function: the proof kit's per-run fault plan. */
  faultInjectionFile?: string;
  /**
   * Serve the consumers' providers from the local provider (./provider: one API per provider the
   * consumer specs name, with idempotency keys), instead of the recording double the template falls
   * back to. Default true.
   */
  localProviders?: boolean;
  /** Local provider endpoints that ignore the idempotency key, like SMTP or SES (default none). */
  keylessProviders?: string[];
}

/** Requests the functions and pollers made, as AWS would bill them (see call-counter.ts). */
export interface RuntimeStats {
  dynamodbWrites: number;
  dynamodbReads: number;
  dynamodbCalls: number;
  /** Write and read units by table name (the same units as dynamodbWrites / dynamodbReads). */
  dynamodbByTable: Record<string, { writeUnits: number; readUnits: number }>;
  sqs: number;
  lambdaInvocations: number;
  byOperation: { dynamodb: Record<string, number>; sqs: Record<string, number> };
  /** Powertools metrics the functions emitted, summed, e.g. `DuplicateSuppressed{consumer=loyalty}`. */
  metrics: Record<string, number>;
  /** Per function (display name): crashes and delivery evidence, so the proof kit can tell which fault fired. */
  functions: Record<string, { crashes: number } & DeliveryCounts>;
}
