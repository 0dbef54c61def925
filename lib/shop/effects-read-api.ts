import { Construct } from 'constructs';
import { SHOP_ENV } from '../../lambdas/shop/env-names';
import { ENV, FunctionWithDefaults } from '../exactly-once';
import type { OrdersApi } from './orders-api';

export interface EffectsReadApiProps {
  /** The API the read routes join. */
  ordersApi: OrdersApi;
  effectsTableName: string;
  /** Where the customer read finds which caller placed orders for which customer. */
  ordersTableName: string;
}

/**
 * Read models of the consumers' effects, on the same IAM-authenticated API:
 * GET /customers/{customerId} (points, for the callers who placed orders for
 * the customer: it derives the caller with the API's rule and reads the Orders
 * table's access items) and GET /inventory/{sku} (reserved, shared stock).
 */
export class EffectsReadApi extends Construct {
  readonly getCustomer: FunctionWithDefaults;
  readonly getInventory: FunctionWithDefaults;

  constructor(scope: Construct, id: string, props: EffectsReadApiProps) {
    super(scope, id);
    const environment = { [ENV.effectsTable]: props.effectsTableName };
    this.getCustomer = new FunctionWithDefaults(this, 'GetCustomer', {
      entry: 'lambdas/shop/entry-points/get-customer.ts',
      asyncDeadLetterQueue: false,
      environment: {
        ...environment,
        [SHOP_ENV.ordersTable]: props.ordersTableName,
        ...props.ordersApi.callerEnvironment,
      },
    });
    this.getInventory = new FunctionWithDefaults(this, 'GetInventory', {
      entry: 'lambdas/shop/entry-points/get-inventory.ts',
      asyncDeadLetterQueue: false,
      environment,
    });

    const root = props.ordersApi.api.root;
    props.ordersApi.addGet(root.addResource('customers').addResource('{customerId}'), this.getCustomer, 'customerId');
    props.ordersApi.addGet(root.addResource('inventory').addResource('{sku}'), this.getInventory, 'sku');
  }
}
