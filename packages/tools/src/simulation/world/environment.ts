// First: the modules below load Powertools, which reads its settings when it loads.
import './quiet-powertools';
import { ENV } from '@exactly-once/runtime/env-names';

/**
 * The application's entry modules are factories that read no environment when they load (a
 * deployed binding beside each builds its parts from the environment): the simulation gives them
 * their parts. The mechanism's relay and sweeper modules still build their deployed handler as
 * they load (packages/runtime/src/wiring/relay-handler.ts, sweeper-handler.ts), so they get these
 * values, only to load: the simulation runs their factories on each simulated invocation's parts,
 * its routes included, and never the handler built from these.
 */
const MECHANISM_MODULES_AT_LOAD: Record<string, string> = {
  [ENV.outboxTable]: 'unused',
  [ENV.outboxEntityPartitionPrefix]: 'unused',
  [ENV.outboxSweepAgeSeconds]: '1',
  [ENV.outboxDispatchedRetentionSeconds]: '1',
  // A list of routes must name one at least: this one is never sent to.
  [ENV.consumerRoutes]: JSON.stringify([
    { consumer: 'unused', queueUrl: 'unused', fifo: false, eventTypes: ['Unused'] },
  ]),
};
for (const [name, value] of Object.entries(MECHANISM_MODULES_AT_LOAD)) process.env[name] ??= value;

export {};
