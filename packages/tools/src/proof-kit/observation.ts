/**
 * One request of the plan as the drive (drive.ts) saw it answered. Its own module, types only: the
 * drive writes the intent ledger (intents.ts) and the ledger reads observations, so neither imports
 * the other for it.
 */
export interface Observation {
  index: number;
  status: number | 'no-response';
  body?: string;
  replayed: boolean;
  startedAt: number;
  latencyMs: number;
}
