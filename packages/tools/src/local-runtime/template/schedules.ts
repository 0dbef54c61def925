import { functionLogicalIdIn } from './lambda';
import { resourcesOfType, type CfnTemplate } from './model';

export interface ScheduleDefinition {
  ruleLogicalId: string;
  expression: string;
  periodMs: number;
  targets: { functionLogicalId: string; input?: string }[];
}

const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/**
 * Reads AWS::Events::Rule resources with a `rate(...)` schedule targeting
 * functions of the stack. Returns cron schedules, event patterns and other
 * targets as unsupported, with the reason.
 */
export function scheduleDefinitions(template: CfnTemplate): {
  schedules: ScheduleDefinition[];
  unsupported: { logicalId: string; reason: string }[];
} {
  const schedules: ScheduleDefinition[] = [];
  const unsupported: { logicalId: string; reason: string }[] = [];
  for (const [logicalId, rule] of resourcesOfType(template, 'AWS::Events::Rule')) {
    const p = rule.Properties ?? {};
    if (p.State === 'DISABLED') continue;
    const expression = String(p.ScheduleExpression ?? '');
    const rate = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
    if (rate === null) {
      unsupported.push({
        logicalId,
        reason: expression ? `schedule ${expression} (only rate(...))` : 'event pattern rules',
      });
      continue;
    }
    const targets: ScheduleDefinition['targets'] = [];
    for (const target of (p.Targets ?? []) as Record<string, unknown>[]) {
      const fn = functionLogicalIdIn(target.Arn, template);
      if (fn === undefined)
        unsupported.push({ logicalId, reason: `target ${JSON.stringify(target.Arn)} (only functions of the stack)` });
      else targets.push({ functionLogicalId: fn, input: typeof target.Input === 'string' ? target.Input : undefined });
    }
    const unit = rate[2].replace(/s$/, '');
    schedules.push({ ruleLogicalId: logicalId, expression, periodMs: Number(rate[1]) * UNIT_MS[unit], targets });
  }
  return { schedules, unsupported };
}
