/**
 * The stack outputs the tools find a deployed (or locally run) stack by: the DLQ tool and the proof kit
 * read these names (locally from the outputs `npm start` writes); `addToolOutputs` (packages/cdk/src) writes them. A consumer's own
 * outputs are named by `consumerOutputNames`.
 *
 * @example A tool reads the relay's failure queue of the stack it targets
 * ```ts
 * const url = target.outputs[STACK_OUTPUTS.relayFailureQueueUrl];
 * ```
 */
export const STACK_OUTPUTS = {
  /** The stage the stack was synthesized for (dev, prod...). */
  stage: 'Stage',
  /** The caller rule's human-role patterns, comma-separated: the proof kit derives its caller by them. */
  humanRolePatterns: 'HumanRolePatterns',
  /** The REST API's stage URL. */
  apiUrl: 'ApiUrl',
  /** The consumers' inbox and effects table. */
  effectsTableName: 'EffectsTableName',
  /** The provider calls' done-marks and leases. */
  providerLogTableName: 'ProviderLogTableName',
  /** The stream relay's on-failure queue (pointers to outbox records it gave up on). */
  relayFailureQueueUrl: 'RelayFailureQueueUrl',
  /** The sweeper's async-invocation DLQ (failed scheduled runs). */
  sweeperDlqUrl: 'SweeperDlqUrl',
  /** The fault-injection switch's SSM parameter; only a stack built with fault injection has it. */
  faultParameterName: 'FaultParameterName',
} as const;
