import { resolve } from 'node:path';
import { callerPrincipal, DEFAULT_CALLER_RULE } from '@exactly-once/runtime/api/caller';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import type { ProofDomain } from '@exactly-once/tools/proof-kit/domain';
import { seededRandom } from '@exactly-once/tools/proof-kit/random';
import { LOCAL_ACCOUNT_ID } from '@exactly-once/tools/local-runtime/template/model';
import { loadDomain } from '@exactly-once/tools/load-domain';

/**
 * The application's domain as the runtime checks every application keeps see it (end-to-end.test.ts,
 * caller-scope.test.ts): its consumers and its proof plug-in (`proof`, a ProofDomain), from the tooling
 * module of the domain package.json names (`exactlyOnce.example`: the example's, or the one
 * `npm run new:domain` wrote), loaded by the tools' `loadDomain`, so these tests name no domain and a fork keeps them.
 */
export interface ApplicationDomain {
  readonly consumers: readonly ConsumerSpec[];
  readonly proof: ProofDomain;
}

const ROOT = resolve(__dirname, '..', '..');

/** The application's consumers and proof domain, loaded as the tools' entry points load it; a clear error when it gives no proof domain. */
export function applicationDomain(root = ROOT): ApplicationDomain {
  const tooling = loadDomain(root);
  if (tooling.proof === undefined)
    throw new Error("the application's tooling module gives no proof domain: the checks cannot build a request of it");
  return { consumers: tooling.consumers, proof: tooling.proof };
}

/** The caller the local API sees for an IAM user's access key id (any key id is a user there). */
export const userCaller = (accessKeyId: string): string => `arn:aws:iam::${LOCAL_ACCOUNT_ID}:user/${accessKeyId}`;

/** The caller the API derives for a session of a workload role (all its sessions share it), by the default rule. */
export const roleCaller = (role: string, session: string): string =>
  callerPrincipal(
    { userArn: `arn:aws:sts::${LOCAL_ACCOUNT_ID}:assumed-role/${role}/${session}` },
    DEFAULT_CALLER_RULE,
  )!;

/**
 * One create of the domain, as the proof kit builds it: the first new intent of a one-intent plan for
 * `caller`, its body carrying `runId`.
 */
export function oneCreate(proof: ProofDomain, caller: string, runId: string): PlannedRequest {
  const plan = proof.buildPlan(seededRandom(1), {
    intents: 1,
    mix: { new: 1, retrySequential: 0, retryConcurrent: 0, cancel: 0, read: 0 },
    callers: [caller],
    parties: 1,
    resources: 1,
    runId,
    entityIdOf: proof.entityIdOf,
  });
  const create = plan.find((request) => request.op === 'new');
  if (create?.idempotencyKey === undefined) throw new Error('The proof domain planned no create under a key');
  return create;
}
