import type { ConsumerWiring } from '@exactly-once/runtime';
import { fulfilmentReleases } from './fulfilment-releases';

/**
 * Fulfilment's releases with this release reading no other ledger's orders (`'off'`): the simulation's
 * switch for the legacy read, as a consumer entry (world.ts FULFILMENT_WITHOUT_LEGACY_READ).
 */
export function makeHandler(wiring: ConsumerWiring) {
  return fulfilmentReleases(wiring, 'off');
}
