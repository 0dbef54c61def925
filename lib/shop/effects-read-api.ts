import { Construct } from 'constructs';
import { ENV } from '../../lambdas/shared/env-names';
import { SHOP_ENV } from '../../lambdas/shop/env-names';
import { HouseFunction } from '../exactly-once/function-defaults';
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
  readonly getCustomer: HouseFunction;
  readonly getInventory: HouseFunction;

  constructor(scope: Construct, id: string, props: EffectsReadApiProps) {
    super(scope, id);
    const environment = { [ENV.effectsTable]: props.effectsTableName };
    this.getCustomer = new HouseFunction(this, 'GetCustomer', {
      entry: 'lambdas/entry-points/get-customer.ts',
      asyncDeadLetterQueue: false,
      environment: {
        ...environment,
        [SHOP_ENV.ordersTable]: props.ordersTableName,
        ...props.ordersApi.callerEnvironment,
      },
    });
    this.getInventory = new HouseFunction(this, 'GetInventory', {
      entry: 'lambdas/entry-points/get-inventory.ts',
      asyncDeadLetterQueue: false,
      environment,
    });

    const root = props.ordersApi.api.root;
    props.ordersApi.addGet(root.addResource('customers').addResource('{customerId}'), this.getCustomer, 'customerId');
    props.ordersApi.addGet(root.addResource('inventory').addResource('{sku}'), this.getInventory, 'sku');
  }
}
