import { randomUUID } from 'node:crypto';
import { invokeAsync, type AsyncInvokeOptions } from './host/async-invoker';
import type { FunctionHost } from './host/function-host';
import type { ScheduleDefinition } from './template/schedules';

export interface ScheduledTarget {
  host: FunctionHost;
  async: Omit<AsyncInvokeOptions, 'signal'>;
}

/**
 * EventBridge `rate(...)` rules: each period, every target function gets the
 * scheduled event (or the target's constant Input), invoked asynchronously.
 * `timeScale` shortens periods for tests (0.01 turns a minute into 0.6 s).
 */
export class Scheduler {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly abort = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly schedules: { definition: ScheduleDefinition; ruleArn: string }[],
    private readonly targetOf: (functionLogicalId: string) => ScheduledTarget,
    private readonly region: string,
    private readonly account: string,
    private readonly timeScale = 1,
  ) {}

  start(): void {
    for (const { definition, ruleArn } of this.schedules) {
      const timer = setInterval(
        () => this.fire(definition, ruleArn),
        Math.max(10, definition.periodMs * this.timeScale),
      );
      this.timers.push(timer);
    }
  }

  async stop(): Promise<void> {
    this.timers.splice(0).forEach(clearInterval);
    this.abort.abort();
    await Promise.allSettled([...this.inFlight]);
  }

  private fire(definition: ScheduleDefinition, ruleArn: string): void {
    const event = {
      version: '0',
      id: randomUUID(),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: this.account,
      time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      region: this.region,
      resources: [ruleArn],
      detail: {},
    };
    for (const target of definition.targets) {
      const { host, async } = this.targetOf(target.functionLogicalId);
      const payload = target.input !== undefined ? (JSON.parse(target.input) as unknown) : event;
      const run = invokeAsync(host, payload, { ...async, signal: this.abort.signal }).catch((error: Error) =>
        async.log(`scheduled invocation failed: ${error.message}`),
      );
      this.inFlight.add(run);
      void run.finally(() => this.inFlight.delete(run));
    }
  }
}
