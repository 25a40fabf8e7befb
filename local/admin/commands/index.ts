import { CARRIER_COMMANDS } from '../carrier-commands';
import type { AdminCommand } from '../registry';
import { authorizerFlush } from './authorizer';
import { consentSet, consentShow } from './consent';
import { keyCreate, keyList, keyRevoke, keyRotate } from './key';
import { tenantCreate, tenantList, tenantShow, tenantUpdate } from './tenant';
import { WEBHOOK_COMMANDS } from './webhook';

/** Every command of the operator CLI, in the order `--help` lists them. Add new modules here. */
export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  tenantCreate,
  tenantUpdate,
  tenantList,
  tenantShow,
  keyCreate,
  keyList,
  keyRotate,
  keyRevoke,
  authorizerFlush,
  consentSet,
  consentShow,
  ...WEBHOOK_COMMANDS,
  ...CARRIER_COMMANDS,
];
