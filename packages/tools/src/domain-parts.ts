import type { ExampleTooling } from './domain';
import type { ProofDomain } from './proof-kit/domain';
import type { SimulationWorld } from './simulation/contract';

/**
 * The domain's proof domain; a clear error when it gives none (the kit cannot judge a run without one).
 *
 * @example
 * ```ts
 * const proof = proofDomainOf(domain);
 * const plan = proof.buildPlan(options);
 * ```
 */
export function proofDomainOf(domain: Pick<ExampleTooling, 'proof'>): ProofDomain {
  const { proof } = domain;
  if (proof === undefined)
    throw new Error(
      "The example's tooling module gives no proof domain (`proof`, packages/tools/src/proof-kit/domain.ts): the proof kit has no plan to send and no invariants to judge.",
    );
  return proof;
}

/**
 * The domain's simulated world; a clear error when it gives none.
 *
 * @example
 * ```ts
 * const world = await simulationWorldOf(domain);
 * const result = await world.simulate(world.options({ seed: 1 }));
 * ```
 */
export async function simulationWorldOf(domain: Pick<ExampleTooling, 'simulation'>): Promise<SimulationWorld> {
  const { simulation } = domain;
  if (simulation === undefined)
    throw new Error(
      "The example's tooling module gives no simulated world (`simulation`, packages/tools/src/simulation/contract.ts): there is nothing to simulate.",
    );
  return simulation();
}
