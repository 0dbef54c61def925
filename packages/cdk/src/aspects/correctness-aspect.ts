import { Annotations, CfnResource, type IAspect } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { StackModels, Unverifiable, type RenderedResource, type StackModel } from './model';

/**
 * The rule names, as they appear in brackets at the start of every message.
 *
 * @example
 * ```ts
 * const rules: CorrectnessRule[] = applyCorrectnessAspects(this).map((aspect) => aspect.rule);
 * ```
 */
export type CorrectnessRule =
  | 'VisibilityTimeout'
  | 'DeadLetterQueue'
  | 'ReportBatchItemFailures'
  | 'StreamSource'
  | 'InboxTtl'
  | 'DedupeHorizon'
  | 'AlarmDelivery'
  | 'RetryBudget'
  | 'ReservedConcurrency'
  | 'QueueSenders'
  | 'OutboxRetention';

/**
 * What every correctness aspect takes: how to treat a rule it cannot check, and the model it
 * shares with the aspects registered with it.
 *
 * @example
 * ```ts
 * const common: CorrectnessAspectOptions = { models: new StackModels(), unverifiable: 'warning' };
 * Aspects.of(this).add(new InboxTtlAspect(common), { priority: AspectPriority.READONLY });
 * Aspects.of(this).add(new DedupeHorizonAspect(common), { priority: AspectPriority.READONLY });
 * ```
 */
export interface CorrectnessAspectOptions {
  /**
   * What to do when a rule cannot be checked at synth time: the queue or
   * function is imported or in another stack, or a value is a token such as a
   * parameter. Default `error`: synth refuses what it cannot vouch for. With
   * `warning`, the message is a warning acknowledgeable under the id
   * `Correctness/<Rule>/Unverifiable`, and the setting is the deployer's to get right.
   *
   * @default 'error'
   */
  readonly unverifiable?: 'error' | 'warning';
  /**
   * Lets the aspects registered together share one model per stack; each aspect makes its own otherwise.
   *
   * @default - a new StackModels of this aspect's own
   */
  readonly models?: StackModels;
}

/**
 * Base of the correctness aspects: each checks one CloudFormation resource
 * type, reads it as rendered (see `StackModel`), and reports every violation
 * as an error annotation on the resource to fix, which makes synth fail.
 * Messages start with `[Correctness/<Rule>]` and name the resources by
 * construct path.
 *
 * The aspect only finds the resources; the check itself runs in the
 * validation phase of synth (a `node.addValidation` hook), once every aspect
 * has run and references are prepared. Why: aspect priorities order the
 * aspects on each node, not across the tree. A check made while visiting an
 * event source mapping reads the queue and the function too, and a mutating
 * aspect may still change those when the walk reaches them, after this aspect
 * has run; checking then would vouch for a value that is not deployed.
 * Register the aspects with `AspectPriority.READONLY` all the same: they
 * change nothing. `app.synth({ skipValidation: true })` skips the checks.
 *
 * @example The aspects applyCorrectnessAspects registered, e.g. to list their rules in a test
 * ```ts
 * const aspects: CorrectnessAspect[] = applyCorrectnessAspects(stack);
 * expect(aspects.map((a) => a.rule)).toContain('InboxTtl');
 * ```
 */
export abstract class CorrectnessAspect implements IAspect {
  abstract readonly rule: CorrectnessRule;
  /** The CloudFormation type this aspect visits. */
  protected abstract readonly resourceType: string;
  private readonly models: StackModels;
  private readonly unverifiable: 'error' | 'warning';
  /** Aspects run again when a synth is retried: check each resource once. */
  private readonly registered = new WeakSet<CfnResource>();

  constructor(options: CorrectnessAspectOptions = {}) {
    this.models = options.models ?? new StackModels();
    this.unverifiable = options.unverifiable ?? 'error';
  }

  visit(node: IConstruct): void {
    if (!CfnResource.isCfnResource(node) || node.cfnResourceType !== this.resourceType || this.registered.has(node)) {
      return;
    }
    this.registered.add(node);
    node.node.addValidation({
      validate: () => {
        this.checkNow(node);
        // Violations are annotations (they name the rule, fail synth and can be warnings), not validation errors.
        return [];
      },
    });
  }

  private checkNow(node: CfnResource): void {
    const model = this.models.of(node);
    const resource = model.resource(node);
    if (resource === undefined) return;
    this.guard(resource, () => this.check(resource, model));
  }

  /** Checks one resource of `resourceType`; throws `Unverifiable` for what it cannot read. */
  protected abstract check(resource: RenderedResource, model: StackModel): void;

  /** Reports a violation on `on` (the resource to change), which fails synth. */
  protected fail(on: RenderedResource, message: string): void {
    Annotations.of(on.construct).addError(`[Correctness/${this.rule}] ${message}`);
  }

  /** Runs one independent part of a check, so one unreadable value does not hide the other violations. */
  protected guard(on: RenderedResource, part: () => void): void {
    try {
      part();
    } catch (error) {
      if (!(error instanceof Unverifiable)) throw error;
      const message = `[Correctness/${this.rule}] Cannot verify ${on.name}: ${error.reason}.`;
      if (this.unverifiable === 'warning') {
        Annotations.of(on.construct).addWarningV2(
          `Correctness/${this.rule}/Unverifiable`,
          `${message} Make sure it is right outside this app.`,
        );
      } else {
        Annotations.of(on.construct).addError(
          `${message} Define it in this stack with values known at synth time, or accept the risk with ` +
            "applyCorrectnessAspects(scope, { unverifiable: 'warning' }).",
        );
      }
    }
  }
}
