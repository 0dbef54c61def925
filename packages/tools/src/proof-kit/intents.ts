import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type { Observation } from './observation';
import type { PlannedRequest } from './plan';

/**
 * The intent ledger: what a load generator asked for and what it was told,
 * one JSON line per keyed create request. Every generator writes the same
 * lines (the proof kit's driver, the Artillery processor in
 * packages/tools/src/proof-kit/aws/), so `--verify-only --intents <files...>` can merge the
 * ledgers of many workers and hold the stack's entities against them: one
 * entity per accepted key, none for a refused one.
 *
 * A generator writes to the file `INTENT_LEDGER` names (appending), or to
 * standard output with `INTENT_LEDGER=stdout`, each line prefixed with
 * {@link LEDGER_MARK}: a Lambda or Fargate worker's output lands in CloudWatch
 * Logs, where the marked lines are found and saved as they are.
 */
export interface IntentRecord {
  /** The identity that signed the request, as STS names it (a role session's ARN; locally, the IAM user of the access key id). */
  caller: string;
  key: string;
  /** The HTTP status, or 'no-response' (connection lost, timed out: outcome unknown). */
  status: number | 'no-response';
  /** The response body of a 201: the entity it named. */
  response?: string;
  /** The SHA-256 of the request body: a key's retry must send the same body. */
  requestSha256?: string;
  replayed: boolean;
  /** Epoch ms the request was sent. */
  at: number;
}

export const LEDGER_ENV = 'INTENT_LEDGER';
export const LEDGER_MARK = 'EO_INTENT ';

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The ledger lines of a run of the proof kit's driver: its keyed creates and what each got. */
export function ledgerOfRun(plan: readonly PlannedRequest[], observations: readonly Observation[]): IntentRecord[] {
  const records: IntentRecord[] = [];
  // By the planned request's own index: a client's retries are sent as a plan of some requests only.
  const byIndex = new Map(plan.map((p) => [p.index, p]));
  for (const o of observations) {
    const planned = byIndex.get(o.index);
    if (planned?.idempotencyKey === undefined || !isCreate(planned)) continue;
    records.push({
      caller: planned.caller,
      key: planned.idempotencyKey,
      status: o.status,
      ...(o.status === 201 && o.body !== undefined ? { response: o.body } : {}),
      ...(planned.body !== undefined ? { requestSha256: sha256(JSON.stringify(planned.body)) } : {}),
      replayed: o.replayed,
      at: o.startedAt,
    });
  }
  return records;
}

/** Whether a planned request is a create under its Idempotency-Key (a new intent or a planned replay of one). */
export const isCreate = (p: PlannedRequest) =>
  p.op === 'new' || p.op === 'retry-sequential' || p.op === 'retry-concurrent';

/** Appends records to the ledger `INTENT_LEDGER` names, if it names one. */
export function writeLedger(records: readonly IntentRecord[], destination = process.env[LEDGER_ENV]): void {
  if (destination === undefined || destination === '' || records.length === 0) return;
  const lines = records.map((r) => `${LEDGER_MARK}${JSON.stringify(r)}\n`).join('');
  if (destination === 'stdout') process.stdout.write(lines);
  else fs.appendFileSync(destination, lines);
}

/**
 * The records of ledger files, merged: a line is a record if it holds the
 * mark (anywhere: a CloudWatch export prefixes its own fields) or is a bare
 * JSON record. Anything else is an error naming the file and line, since a
 * ledger silently cut short would pass keys it never checked.
 */
export function readLedgers(files: readonly string[]): IntentRecord[] {
  const records: IntentRecord[] = [];
  for (const file of files) {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      const at = line.indexOf(LEDGER_MARK);
      const json = at >= 0 ? line.slice(at + LEDGER_MARK.length) : line;
      let record: Partial<IntentRecord>;
      try {
        record = JSON.parse(json) as Partial<IntentRecord>;
      } catch {
        throw new Error(`${file}:${i + 1}: not an intent record: ${line.slice(0, 120)}`);
      }
      if (typeof record.caller !== 'string' || typeof record.key !== 'string' || record.status === undefined)
        throw new Error(`${file}:${i + 1}: an intent record needs caller, key and status: ${line.slice(0, 120)}`);
      records.push(record as IntentRecord);
    });
  }
  return records;
}

/**
 * Ledger records as the plan and observations the invariant checks judge:
 * each record a keyed create by its caller's principal (`principalOf`: the
 * identity as the API scopes it), answered as recorded.
 */
export function factsOfLedger(
  records: readonly IntentRecord[],
  principalOf: (caller: string) => string,
): { plan: PlannedRequest[]; observations: Observation[] } {
  const plan: PlannedRequest[] = [];
  const observations: Observation[] = [];
  records.forEach((r, index) => {
    plan.push({
      index,
      op: 'new',
      caller: principalOf(r.caller),
      method: 'POST',
      path: '',
      idempotencyKey: r.key,
      ...(r.requestSha256 !== undefined ? { body: { requestSha256: r.requestSha256 } } : {}),
    });
    observations.push({
      index,
      status: r.status,
      ...(r.response !== undefined ? { body: r.response } : {}),
      replayed: r.replayed,
      startedAt: r.at,
      latencyMs: 0,
    });
  });
  return { plan, observations };
}
