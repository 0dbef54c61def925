/**
 * The guards' names for `--guard name=value` (the CLI and the simulated world's contract): the
 * mechanism's, and a domain's own.
 */

/** Guard names for `--guard name=value`: switches (true|false) and choices (one of the values). */
export interface GuardNames {
  readonly switches: readonly string[];
  readonly choices: Readonly<Record<string, readonly string[]>>;
}

const MECHANISM_GUARD_NAMES: GuardNames = {
  switches: [
    'inboxClaim',
    'sequenceCondition',
    'providerCompletion',
    'recordDeadline',
    'dedupeHorizon',
    'providerCallLease',
    'fingerprint',
    'queueSenders',
    'futureStamps',
    'requestToken',
    'ownCommit',
    'sentFingerprint',
    'doneMarkBound',
    'legacyKeyLookup',
    'rollbackSafeUpgrade',
    'dlqSenderPolicy',
    'tenantInProviderKey',
  ],
  choices: {
    dedupeOn: ['eventId', 'messageId'],
    callerScope: ['principal', 'session'],
    retryBudget: ['budget', 'seconds'],
    apiIdempotency: ['powertools', 'no-payload-validation', 'bypassed'],
  },
};

/** `--guard name=value` on the mechanism's guards and the domain's; an unknown name or value names every known setting. */
export function withGuard(
  guards: Readonly<Record<string, unknown>>,
  name: string,
  raw: string,
  domainGuards: GuardNames = { switches: [], choices: {} },
): Record<string, unknown> {
  const switches = [...MECHANISM_GUARD_NAMES.switches, ...domainGuards.switches];
  const choices = { ...MECHANISM_GUARD_NAMES.choices, ...domainGuards.choices };
  const next = { ...guards };
  if (switches.includes(name) && (raw === 'true' || raw === 'false')) next[name] = raw === 'true';
  else if (choices[name]?.includes(raw)) next[name] = raw;
  else
    throw new Error(
      `unknown guard setting ${name}=${raw}; known: ${switches.join(', ')} (true|false), ` +
        Object.entries(choices)
          .map(([guard, values]) => `${guard} (${values.join('|')})`)
          .join(', '),
    );
  return next;
}
