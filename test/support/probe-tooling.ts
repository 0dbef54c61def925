import { parseEnvelope } from '@exactly-once/runtime';
import type { ExampleTooling } from '@exactly-once/tools/domain';
import { PROBE_EVENT_TYPES } from '../exactly-once/fixtures/probe-spec';
import { PROBE_APP_CONSUMERS } from '../exactly-once/fixtures/probe-stack-consumers';
import { PROBE_PROOF } from './neutral-proof-domain';

/**
 * What the tools know of the neutral fixture's probe stack (test/exactly-once/fixtures/probe-stack.ts),
 * as `tooling/<example>/index.ts` tells them of the example: its consumers as the stack deploys them,
 * the output naming its outbox table (Things), its events, and the proof kit's domain (PROBE_PROOF).
 * The runtime tests hand it to the tools' engines (and name it to a command with `--tooling`) to prove the
 * mechanism's tools on the probe app (probe-app.ts) with the example deleted. No `scaffold`: the probe
 * stack has no consumer folder for `new:consumer` to write into, and the scaffolder refuses without one.
 */
export const tooling = {
  consumers: PROBE_APP_CONSUMERS,
  outboxTableOutput: 'ThingsTableName',
  proof: PROBE_PROOF,
  tryIt: [`POST /things '{"ownerId":"owner-1","amount":3}' --idempotency-key thing-1`],
  isEvent(body: string): boolean {
    try {
      return (PROBE_EVENT_TYPES as readonly string[]).includes(parseEnvelope(body).type);
    } catch {
      return false;
    }
  },
} satisfies ExampleTooling;

/** This module's path, for a command's `--tooling` (resolved from the repository root). */
export const PROBE_TOOLING_MODULE = 'test/support/probe-tooling.ts';
