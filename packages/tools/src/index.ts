/**
 * `@exactly-once/tools`: what an application's plug-ins for the tools write against. The commands
 * themselves (npm start, loadtest, sim, bench, dlq, new:consumer, new:domain) run from their own
 * modules; the engines a simulation plug-in drives are `@exactly-once/tools/simulation/world/world`.
 * This root loads nothing heavy: importing it from a tooling module costs no simulation or AWS client.
 */

/**
 * What the tools know of the application's domain: `tooling/<example>/index.ts` exports one as
 * `tooling` (its consumers, its outbox table's output, how to tell its events, and optionally the
 * proof kit's domain, the simulation, the scaffolder's folder).
 *
 * @example
 * ```ts
 * import type { ExampleTooling } from '@exactly-once/tools';
 *
 * export const tooling = {
 *   consumers: CONSUMERS,
 *   outboxTableOutput: 'BookingsTableName',
 *   isEvent: (body: string) => isBookingEvent(body),
 * } satisfies ExampleTooling;
 * ```
 */
export type { ExampleTooling } from './domain';

/**
 * The domain as the proof kit judges it (`tooling/<example>/proof.ts`): its request plan, its entities
 * and events, and the invariants of its own effects; a finding is a `Violation`.
 *
 * @example
 * ```ts
 * import type { ProofDomain, Violation } from '@exactly-once/tools';
 *
 * const checkEffects: ProofDomain['checkEffects'] = (entities, effects) => {
 *   const violations: Violation[] = [];
 *   return { violations, summary: `${entities.length} bookings` };
 * };
 * ```
 */
export type { EntityItem, ProducedEvent, ProofDomain, Violation } from './proof-kit/domain';

/**
 * One request of the proof kit's plan, as a proof domain's `buildPlan` writes it.
 *
 * @example
 * ```ts
 * import type { PlannedRequest } from '@exactly-once/tools';
 *
 * const plan: PlannedRequest[] = [];
 * plan.push({ index: 0, op: 'new', caller, method: 'POST', path: '/bookings', idempotencyKey: `${runId}-0`, body });
 * ```
 */
export type { PlannedRequest } from './proof-kit/plan';

/**
 * The seeded choices a plan is built with, so a seed replays the same plan.
 *
 * @example
 * ```ts
 * import { intBetween, pick, seededRandom } from '@exactly-once/tools';
 *
 * const random = seededRandom(7);
 * const nights = intBetween(random, 1, 5);
 * const caller = pick(random, callers);
 * ```
 */
export { intBetween, pick, seededRandom, type Random } from './proof-kit/random';

/**
 * The simulated world `npm run sim` runs, as a tooling module's `simulation` loads it.
 *
 * @example
 * ```ts
 * import type { SimulationWorld } from '@exactly-once/tools';
 *
 * const simulation = (): Promise<SimulationWorld> => import('./simulation/world').then((w) => w.BOOKINGS_SIMULATION);
 * ```
 */
export type { SimulationWorld } from './simulation/contract';
