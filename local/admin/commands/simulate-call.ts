import { z } from 'zod';
import type { RecordCallInput } from '../../../lambdas/core/calls';
import { option, parseOptions } from '../options';
import { defineCommand } from '../registry';
import { requireTenant } from './require-tenant';

/**
 * `simulate call`: feeds one call through `recordCall`, the ingestion the carrier callbacks use,
 * so the call and the auto-created contact of its external number appear as they would in AWS.
 */
export function callTimes(status: string, startedAt: Date, durationSec: number | undefined): Pick<RecordCallInput, 'answeredAt' | 'endedAt' | 'durationSec'> {
  if (durationSec === undefined) return { answeredAt: null, endedAt: null, durationSec: null };
  return {
    // Only a completed call was answered; a no-answer or failed call just rang for the duration.
    answeredAt: status === 'completed' ? startedAt : null,
    endedAt: new Date(startedAt.getTime() + durationSec * 1000),
    durationSec,
  };
}

export const simulateCall = defineCommand({
  words: ['simulate', 'call'],
  summary: 'Record a call as the carrier callbacks would (and auto-create the contact of its number)',
  usage:
    '--tenant <id> --direction inbound|outbound --from <e164> --to <e164> [--status <s>] [--started-at <iso>] [--duration <sec>] [--agent <uuid>] [--internal]',
  options: {
    tenant: { type: 'string' },
    direction: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    status: { type: 'string' },
    'started-at': { type: 'string' },
    duration: { type: 'string' },
    agent: { type: 'string' },
    internal: { type: 'boolean' },
  },
  parse: ({ values }): { tenantId: string; call: RecordCallInput } => {
    const o = parseOptions(
      z.object({
        tenant: option.uuid,
        direction: option.direction,
        from: option.e164,
        to: option.e164,
        status: option.callStatus.optional(),
        'started-at': option.isoDateTime.optional(),
        duration: option.wholeNumber.optional(),
        agent: option.uuid.optional(),
        internal: z.boolean().optional(),
      }),
      values,
    );
    const status = o.status ?? 'completed';
    const startedAt = o['started-at'] === undefined ? new Date() : new Date(o['started-at']);
    return {
      tenantId: o.tenant,
      call: {
        direction: o.direction,
        fromNumber: o.from,
        toNumber: o.to,
        status,
        startedAt,
        ...callTimes(status, startedAt, o.duration),
        isInternal: o.internal ?? false,
        agentId: o.agent ?? null,
      },
    };
  },
  run: async ({ tenantId, call }) => {
    await requireTenant(tenantId);
    const { recordCall } = await import('../../../lambdas/core/calls');
    return { call: await recordCall(tenantId, call) };
  },
});
