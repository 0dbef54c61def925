export { apiEvent, lambdaContext } from '@exactly-once/runtime/testing';

export const VALID_ORDER = {
  customerId: 'cust-1',
  items: [
    { sku: 'sku-apple', quantity: 2, unitPriceCents: 150 },
    { sku: 'sku-pear', quantity: 1, unitPriceCents: 999 },
  ],
};
