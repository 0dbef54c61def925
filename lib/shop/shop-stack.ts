import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { LegacyFulfilment } from '../../lambdas/shop/aws/ledgers';
import { ORDER_PK_PREFIX } from '../../lambdas/shop/aws/order-table';
import { CONSUMERS } from '../../lambdas/shop/consumers';
import { ORDER_EVENT_TYPES } from '../../lambdas/shop/domain/events';
import { SHOP_ENV } from '../../lambdas/shop/env-names';
import { ExactlyOnce, setFunctionBuild, type ConsumerSpec } from '@exactly-once/cdk';
import { functionBuildFor, type AppConfig } from '../config';
import { EffectsReadApi } from './effects-read-api';
import { OrdersApi } from './orders-api';
import { Storage } from './storage';

export interface ExactlyOnceStackProps extends StackProps {
  /** The stage's settings (lib/config.ts). */
  readonly config: AppConfig;
  /** Who consumes what. @default CONSUMERS (lambdas/shop/consumers.ts) */
  readonly consumers?: readonly ConsumerSpec[];
}

/**
 * The shop, for one stage: its Orders table (which holds the outbox), the mechanism, and its API. No
 * resource gets an explicit physical name, so every stage's names derive from its stack name.
 */
export class ExactlyOnceStack extends Stack {
  constructor(scope: Construct, id: string, props: ExactlyOnceStackProps) {
    super(scope, id, props);
    const { config } = props;
    // The API's functions: fault code in the bundles only when asked for, the inbox bypass only in the local
    // runtime's build. ExactlyOnce builds its own from the same settings, spread into its props below.
    setFunctionBuild(this, functionBuildFor(config));

    const storage = new Storage(this, 'Storage', config);
    // The stage's settings carry the construct's prop names. Id `Default`: CDK leaves it out of logical ids,
    // so the tables and queues keep the ids they had when the stack built the parts itself.
    const exactlyOnce = new ExactlyOnce(this, 'Default', {
      ...config,
      consumers: props.consumers ?? CONSUMERS,
      producedTypes: ORDER_EVENT_TYPES,
      outboxTable: storage.ordersTable,
      entityPartitionPrefix: ORDER_PK_PREFIX,
    });
    setLegacyFulfilment(this, exactlyOnce);
    const { idempotencyTable, effectsTable } = exactlyOnce;
    const { ordersTable } = storage;
    const ordersApi = new OrdersApi(this, 'OrdersApi', { ...config, ordersTable, idempotencyTable });
    new EffectsReadApi(this, 'EffectsReadApi', { ordersApi, effectsTable, ordersTable });
    exactlyOnce.addApi(ordersApi.api, { metrics: ordersApi.metrics });
    // The stage's log retention and the correctness rules cover the shop's API as well as the mechanism.
    exactlyOnce.retainLogsOf(this);
    exactlyOnce.checkAlso(this);
    // The example's tooling module names these (its entity table, and the bench's tables).
    new CfnOutput(this, 'OrdersTableName', { value: ordersTable.tableName });
    new CfnOutput(this, 'IdempotencyTableName', { value: idempotencyTable.tableName });
  }
}

/** The context key of fulfilment's transition from the inbox ledger (docs/runbook.md, upgrade). */
export const LEGACY_FULFILMENT_CONTEXT = 'fulfilmentLegacyLedger';

/**
 * `-c fulfilmentLegacyLedger=read|off|write` sets FULFILMENT_LEGACY_LEDGER on fulfilment's function
 * (lambdas/shop/aws/ledgers.ts LegacyFulfilment); unset, the function reads its default, `read`. Any other
 * value fails the synth, so a typo cannot deploy fulfilment without its transition read.
 */
function setLegacyFulfilment(stack: Stack, exactlyOnce: ExactlyOnce): void {
  const value: unknown = stack.node.tryGetContext(LEGACY_FULFILMENT_CONTEXT);
  if (value === undefined) return;
  const modes: readonly LegacyFulfilment[] = ['read', 'off', 'write'];
  if (!modes.includes(value as LegacyFulfilment))
    throw new Error(`Context ${LEGACY_FULFILMENT_CONTEXT}=${String(value)}: expected one of ${modes.join(', ')}`);
  const fulfilment = exactlyOnce.pipelines.find((p) => p.spec.name === 'fulfilment');
  fulfilment?.consumer.fn.addEnvironment(SHOP_ENV.fulfilmentLegacyLedger, String(value));
}
