import type { DriveResult, Observation } from './drive';
import { isCreate } from './intents';
import type { PlannedRequest } from './plan';

/**
 * The statuses after which a client cannot know whether its create happened, and the API asks it to send
 * the same request again under the same Idempotency-Key (docs/http-api.md): no answer at all, 409 (the
 * first request with the key is still running), 503 (retry after a while), 502 and 504 (the function or
 * the gateway failed the request, which may have been applied). Not among them: a 500, which the API
 * answers only for a bug, and a 429, which the gateway answers before the function runs, so an entity
 * behind a key that got only 429s is a finding the verdict must keep, not one a retry may confirm.
 */
export function isUnknownOutcome(status: Observation['status']): boolean {
  return status === 'no-response' || [409, 502, 503, 504].includes(status);
}

/** The waits before each round of client retries: a few seconds in all, as a patient client would wait. */
export const CLIENT_RETRY_WAITS_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000];

/**
 * The creates no request of whose key got a definite answer: one planned request per (caller, key), the
 * first of the plan, to send again. A key with any definite answer (a 201, or a 4xx that says what was
 * wrong) needs no retry.
 */
export function unconfirmedCreates(
  plan: readonly PlannedRequest[],
  observations: readonly Observation[],
): PlannedRequest[] {
  const keyOf = (p: PlannedRequest) => `${p.caller} ${p.idempotencyKey}`;
  const first = new Map<string, PlannedRequest>();
  const definite = new Set<string>();
  for (const o of observations) {
    const planned = plan[o.index];
    if (planned.idempotencyKey === undefined || !isCreate(planned)) continue;
    const key = keyOf(planned);
    if (!first.has(key) || first.get(key)!.index > planned.index) first.set(key, planned);
    if (!isUnknownOutcome(o.status)) definite.add(key);
  }
  return [...first.entries()].filter(([key]) => !definite.has(key)).map(([, planned]) => planned);
}

/**
 * A client's retries of the creates it got no definite answer to: each is sent again under its key after
 * each wait of {@link CLIENT_RETRY_WAITS_MS}, until every key has a definite answer or the waits are
 * spent. The retries' answers are observations of the same planned requests, so the verdict judges them
 * with the rest: a key that got a 201 on a retry must name the one entity its key made.
 */
export async function retryUnconfirmedCreates(
  plan: readonly PlannedRequest[],
  observations: readonly Observation[],
  send: (requests: readonly PlannedRequest[]) => Promise<Pick<DriveResult, 'observations'>>,
  options: { waitsMs?: readonly number[]; sleep?: (ms: number) => Promise<void> } = {},
): Promise<{ observations: Observation[]; resent: number; unconfirmed: number }> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const all = [...observations];
  let resent = 0;
  let unconfirmed = unconfirmedCreates(plan, all);
  for (const waitMs of options.waitsMs ?? CLIENT_RETRY_WAITS_MS) {
    if (unconfirmed.length === 0) break;
    await sleep(waitMs);
    const answered = await send(unconfirmed);
    all.push(...answered.observations);
    resent += unconfirmed.length;
    unconfirmed = unconfirmedCreates(plan, all);
  }
  all.sort((a, b) => a.index - b.index || a.startedAt - b.startedAt);
  return { observations: all, resent, unconfirmed: unconfirmed.length };
}
