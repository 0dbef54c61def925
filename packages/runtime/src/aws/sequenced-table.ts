/**
 * The sequence attributes a SequencedLedger keeps on the entity item (each an attribute beside the
 * effect's own): the version of the last event claimed on it, that event's id, its fingerprint
 * (inbox/fingerprint.ts, `v2:`), when it was claimed, and how many claims were ever made on it (one per
 * event applied: the proof kit holds it to the entity's events, so an event applied twice, or a stale one
 * applied over a newer, shows). They never expire: the item is the claim.
 *
 * @example What a generated consumer's entity item holds after its first event
 * ```ts
 * item[SEQUENCE_ATTRIBUTES.seq] === event.version; // and seqEventId, seqFingerprint, seqClaimedAt
 * ```
 */
export const SEQUENCE_ATTRIBUTES = {
  seq: 'seq',
  eventId: 'seqEventId',
  fingerprint: 'seqFingerprint',
  claimedAt: 'seqClaimedAt',
  claims: 'seqClaims',
} as const;
