import type { MechanismGuards } from '../options';

/**
 * Guard `callerScope`: the identity a client's session signs with is an assumed-role session of the
 * client's role (the API's `callerOf` maps it to the role, so sessions of one role are one caller).
 * `session` (a bug): an identity per session, which is what scoping to the session makes of it.
 */
export function signerOf(callerScope: MechanismGuards['callerScope'], client: string, session: number): string {
  return callerScope === 'session'
    ? `arn:aws:iam::111122223333:user/${client}.session-${session}`
    : `arn:aws:sts::111122223333:assumed-role/${client}/session-${session}`;
}
