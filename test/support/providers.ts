/** The `providers` context of a dev stack whose two providers are configured (endpoints and API-key parameters). */
export const CONFIGURED_PROVIDERS = {
  dev: {
    warehouse: {
      endpoint: 'https://warehouse.example/v1/instructions',
      apiKeyParameter: '/exactly-once/dev/warehouse-api-key',
    },
    mail: { endpoint: 'https://mail.example/v1/messages', apiKeyParameter: '/exactly-once/dev/mail-api-key' },
  },
};
