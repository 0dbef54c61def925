import type { EntityItem, ProofDomain, Violation } from './domain';
import type { RunFacts } from './run-facts';

/**
 * Invariant 1 of verify.ts, the intents: every (caller, Idempotency-Key) that got a 201 made exactly one
 * entity, every 201 for one key named that entity and answered the same body, and no entity exists for a
 * key no request got a 201 for (an entity whose every request lost its answer is unconfirmed, not a double).
 */
export function judgeIntents(
  options: Pick<RunFacts, 'plan' | 'observations' | 'entityIdOf' | 'checkIntents'>,
  domain: ProofDomain,
  entitiesById: ReadonlyMap<string, EntityItem>,
): { violations: Violation[]; intents: number } {
  const violations: Violation[] = [];
  const intents = new Map<
    string,
    { caller: string; key: string; bodies: Set<string>; requests: Set<string>; entityIds: Set<string> }
  >();
  const unanswered = new Set<string>();
  for (const observation of options.observations) {
    const planned = options.plan[observation.index];
    if (planned.op === 'new' || planned.op === 'retry-sequential' || planned.op === 'retry-concurrent') {
      const id = `${planned.caller} ${planned.idempotencyKey}`;
      if (observation.status === 'no-response') unanswered.add(id);
      if (observation.status !== 201) continue;
      const intent = intents.get(id) ?? {
        caller: planned.caller,
        key: planned.idempotencyKey!,
        bodies: new Set(),
        requests: new Set(),
        entityIds: new Set(),
      };
      intent.bodies.add(observation.body ?? '');
      if (planned.body !== undefined) intent.requests.add(JSON.stringify(planned.body));
      intent.entityIds.add(domain.idOf(JSON.parse(observation.body ?? '{}')));
      intents.set(id, intent);
    }
  }
  const expectedEntityIds = new Set<string>();
  for (const [id, intent] of intents) {
    const entityId = options.entityIdOf(intent.caller, intent.key);
    expectedEntityIds.add(entityId);
    if (intent.bodies.size > 1)
      violations.push({ invariant: 'replay', detail: `key ${id}: ${intent.bodies.size} different 201 bodies` });
    if (intent.requests.size > 1)
      violations.push({
        invariant: 'replay',
        detail: `key ${id}: 201 for ${intent.requests.size} different request bodies`,
      });
    if (intent.entityIds.size !== 1 || !intent.entityIds.has(entityId)) {
      violations.push({
        invariant: 'orders',
        detail: `key ${id}: 201 named ${[...intent.entityIds].join(', ')}, expected ${entityId}`,
      });
    }
    if (!entitiesById.has(entityId))
      violations.push({ invariant: 'orders', detail: `key ${id}: got 201 but ${entityId} is missing` });
  }
  // A run without a single 201 has no intents and no entities, and 0 == 0 would pass: it proves nothing.
  if (options.checkIntents !== false && intents.size === 0)
    violations.push({ invariant: 'orders', detail: 'no POST got a 201: a run without intents proves nothing' });
  for (const entityId of entitiesById.keys()) {
    if (options.checkIntents === false || expectedEntityIds.has(entityId)) continue;
    const planned = options.plan.find(
      (p) => p.idempotencyKey !== undefined && options.entityIdOf(p.caller, p.idempotencyKey) === entityId,
    );
    const id = planned ? `${planned.caller} ${planned.idempotencyKey}` : '?';
    // An entity whose every request lost its answer (connection error) is not a double, but it is unconfirmed.
    if (!unanswered.has(id))
      violations.push({
        invariant: 'orders',
        detail: `${entityId} exists but no request for its key got a 201`,
      });
  }
  return { violations, intents: intents.size };
}
