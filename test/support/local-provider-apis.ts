import { servedApis, type ServedApi } from '@exactly-once/tools/local-runtime/provider';

/**
 * A mail API (queues a message: 202, `msg_` ids) and a warehouse API (takes PICK and CANCEL_PICK
 * only: 201, `ins_` ids), as the local provider's own tests serve them: given here, not taken from
 * the example's tooling module, so the tool's tests hold whatever the example is.
 */
export const MAIL_AND_WAREHOUSE: readonly ServedApi[] = servedApis([{ providers: ['mail', 'warehouse'] }], {
  mail: { route: '/mail/messages', status: 202, idPrefix: 'msg' },
  warehouse: {
    route: '/warehouse/instructions',
    status: 201,
    idPrefix: 'ins',
    refuse: (payload) =>
      payload.instruction === 'PICK' || payload.instruction === 'CANCEL_PICK'
        ? undefined
        : 'instruction must be PICK or CANCEL_PICK.',
    answerFields: (payload) => ({ instruction: payload.instruction }),
  },
});
