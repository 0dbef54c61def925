/**
 * Exactly-once effects over at-least-once delivery: the CDK half of the mechanism.
 *
 * {@link ExactlyOnce} is the one construct an application's stack adds: the mechanism's tables (each
 * replaceable by one the application has), the outbox relay and sweeper on the application's outbox
 * table, one pipeline per consumer spec with its grants, monitoring, the outputs the tools read, and
 * the correctness Aspects that refuse at synth a setting that would break exactly-once. Beside it, what
 * the application's own constructs build on: {@link FunctionWithDefaults}, {@link IamRestApi},
 * {@link grantTableActions}, {@link OutboxTable} (the application's entity table, with what the outbox needs), the outbox table's index and TTL names, and the configuration the stack
 * reads (providers, reserved concurrency). The parts ExactlyOnce is made of are in `./parts`.
 *
 * This is the public surface: an application's CDK code imports the mechanism from here (a lint rule
 * holds it to that). Nothing here imports an application, and nothing here loads Lambda code:
 * functions name their handler module by path.
 *
 * @example An application's stack (the probe stack, test/exactly-once/fixtures/probe-stack.ts, is one)
 * ```ts
 * const bookingsTable = new OutboxTable(this, 'Bookings', config); // the entity table, with the stream, the outbox index and TTL
 * const exactlyOnce = new ExactlyOnce(this, 'ExactlyOnce', { ...config, consumers: CONSUMERS, producedTypes, outboxTable: bookingsTable, entityPartitionPrefix: 'BOOKING#' });
 * const api = new BookingsApi(this, 'BookingsApi', { ...config, bookingsTable, idempotencyTable: exactlyOnce.idempotencyTable });
 * exactlyOnce.addApi(api.api);
 * ```
 */

export { ExactlyOnce, type ApiMonitoringOptions, type ExactlyOnceProps } from './exactly-once';
export {
  FunctionWithDefaults,
  setFunctionBuild,
  type FunctionBuild,
  type FunctionWithDefaultsProps,
} from './function-defaults';
export { IamRestApi, type IamRestApiProps } from './iam-rest-api';
export { OutboxTable, type OutboxTableProps } from './outbox-table';
export { grantTableActions } from './grants';
export { PROVIDERS_CONTEXT, providerEndpointsOf, type ProviderEndpoints } from './provider-endpoints';
export { ALLOW_RESERVED_CONCURRENCY_CONTEXT } from './aspects';
export { OUTBOX_TTL_ATTRIBUTE, PENDING_OUTBOX_INDEX } from '@exactly-once/runtime/aws/outbox-table';
export { ENV } from '@exactly-once/runtime/env-names';
export type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
