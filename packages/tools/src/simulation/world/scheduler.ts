import { seeded } from '@exactly-once/runtime/runtime/random';

/**
 * Virtual time and a seeded event queue. Nothing sleeps: the clock jumps to
 * the next event. Every choice (latencies, delivery order, faults) is drawn
 * from one seeded generator, and every event is recorded in a trace whose
 * hash identifies the schedule, so a seed replays exactly.
 *
 * The code under test runs in promise continuations: after each event the
 * loop yields to the host once (setImmediate), which lets every continuation
 * the event unblocked run before the next event fires.
 */
export const EPOCH_MS = Date.parse('2026-01-01T00:00:00.000Z');

interface ScheduledEvent {
  at: number;
  seq: number;
  run: () => void;
}

export class Scheduler {
  /** Milliseconds since EPOCH_MS. */
  now = 0;
  readonly random: () => number;
  readonly faults: Record<string, number> = {};
  /** What the simulated services did in answer to faults (a bisected batch, a record given up on), by kind. */
  readonly consequences: Record<string, number> = {};
  private readonly heap: ScheduledEvent[] = [];
  private seq = 0;
  private hash = 0x811c9dc5;
  /** Kept lines as (virtual ms, text); formatted only when read. */
  private readonly traceLines: [number, string][] = [];
  eventsRun = 0;

  constructor(
    readonly seed: number,
    private readonly keepTrace: number = 400,
  ) {
    this.random = seeded(seed);
  }

  date(): Date {
    return new Date(EPOCH_MS + this.now);
  }

  chance(probability: number): boolean {
    return probability > 0 && this.random() < probability;
  }

  between(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }

  at(delayMs: number, run: () => void): void {
    const event = { at: this.now + Math.max(0, delayMs), seq: this.seq++, run };
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (before(heap[parent], event)) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = event;
  }

  /** Counts an injected fault by kind and traces it. */
  fault(kind: string, detail: string): void {
    this.faults[kind] = (this.faults[kind] ?? 0) + 1;
    this.trace(`FAULT ${kind}: ${detail}`);
  }

  /** Counts a consequence of faults by kind and traces it. */
  count(kind: string, detail: string): void {
    this.consequences[kind] = (this.consequences[kind] ?? 0) + 1;
    this.trace(`${kind}: ${detail}`);
  }

  trace(line: string): void {
    let hash = Math.imul(this.hash ^ this.now, 0x01000193);
    for (let i = 0; i < line.length; i++) hash = Math.imul(hash ^ line.charCodeAt(i), 0x01000193);
    this.hash = hash;
    this.traceLines.push([this.now, line]);
    if (this.traceLines.length > this.keepTrace * 2) this.traceLines.splice(0, this.traceLines.length - this.keepTrace);
  }

  traceHash(): string {
    return (this.hash >>> 0).toString(16).padStart(8, '0');
  }

  /** The last traced lines (the full trace is hashed, not kept). */
  traceTail(lines = this.keepTrace): string[] {
    return this.traceLines.slice(-lines).map(([at, line]) => `${(at / 1000).toFixed(3).padStart(10)}s ${line}`);
  }

  /** Runs events until none is left or the clock passes `untilMs`. */
  async run(untilMs = Number.POSITIVE_INFINITY): Promise<void> {
    const restoreHost = cheapHost();
    try {
      while (this.heap.length > 0 && this.heap[0].at <= untilMs) {
        const event = this.pop();
        this.now = event.at;
        this.eventsRun += 1;
        event.run();
        await yieldToContinuations();
      }
    } finally {
      restoreHost();
    }
    if (untilMs !== Number.POSITIVE_INFINITY) this.now = Math.max(this.now, untilMs);
    // Back to the host's event loop once per run: output and timers of the host (jest, the CLI) get their turn.
    await new Promise((resolve) => setImmediate(resolve));
  }

  pending(): number {
    return this.heap.length;
  }

  private pop(): ScheduledEvent {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && before(heap[right], heap[left]) ? right : left;
        if (before(last, heap[child])) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}

function before(a: ScheduledEvent, b: ScheduledEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * Resolves once every promise continuation queued so far, and every one those
 * queue in turn, has run: Node runs the nextTick queue only after the
 * microtask queue is empty. (setImmediate would wait for the same, plus a turn
 * of the event loop per event, which costs more than most events.) The code
 * under test schedules nothing with nextTick or timers: its clock is this one.
 */
function yieldToContinuations(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve));
}

/**
 * Host settings that make the simulated functions cheaper to run without
 * changing what they do; returns the function that restores them.
 * - Errors keep no stack: the simulated services throw thousands of them a
 *   second (conditional-check failures, outages, crashes), each capturing a
 *   stack nobody reads (traces and reports use name and message only).
 * - process.env becomes a plain copy: every read of the real one crosses into
 *   C++, and Powertools reads it several times per record (its invoke-store check).
 * Runs that overlap (one process running two schedules at once) share one
 * swap: the host is restored when the last of them ends, not left half-swapped.
 */
let hostRuns = 0;
let restoreHost: () => void = () => undefined;

function cheapHost(): () => void {
  if (hostRuns++ === 0) {
    const stackTraceLimit = Error.stackTraceLimit;
    const env = process.env;
    Error.stackTraceLimit = 0;
    process.env = { ...env };
    restoreHost = () => {
      Error.stackTraceLimit = stackTraceLimit;
      process.env = env;
    };
  }
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    if (--hostRuns === 0) restoreHost();
  };
}
