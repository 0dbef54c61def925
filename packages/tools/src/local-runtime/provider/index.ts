/**
 * The local provider: the provider APIs the example's consumers call, failing like real ones
 * (Stripe-like idempotency keys, a keyless mode, seeded chaos), logging every effect they perform.
 * See ./README.md.
 */
export { servedApis, type LocalProviderApi, type ServedApi } from './apis';
export {
  startProviderEmulator,
  DEFAULT_PROVIDER_API_KEY,
  DEFAULT_KEY_WINDOW_MS,
  DEFAULT_MAX_BODY_BYTES,
  type ProviderEmulator,
  type ProviderEmulatorOptions,
  type ProviderLog,
  type ProviderCounters,
  type PerformedEffect,
  type KeyRequestCounts,
} from './server';
export {
  parseChaosPlan,
  type ProviderChaosPlan,
  type ProviderEndpoint,
  type FaultRate,
  type ChaosCounters,
} from './chaos';
