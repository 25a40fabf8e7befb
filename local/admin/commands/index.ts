import type { AdminCommand } from '../registry';
import { keyCreate, keyRevoke } from './key';
import { simulateCall } from './simulate-call';
import { tenantCreate, tenantUpdate } from './tenant';

/** Every command of the operator CLI, in the order `--help` lists them. Add new modules here. */
export const ADMIN_COMMANDS: readonly AdminCommand[] = [tenantCreate, tenantUpdate, keyCreate, keyRevoke, simulateCall];
