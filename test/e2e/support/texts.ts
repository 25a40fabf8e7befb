import { randomBytes } from 'node:crypto';
import type { InboundResult, InboundText } from '../../../lambdas/contexts/texting/receiving';
import type { RuntimeInfo } from '../../../local/runtime-file';

/** An inbound text to seed; the carrier's sid is made up when not given. */
export type SeedText = Omit<InboundText, 'messageSid'> & { messageSid?: string };

/** A provider-style message sid ('SM' + 32 hex), as the carrier would send. */
export const newMessageSid = (): string => `SM${randomBytes(16).toString('hex')}`;

/**
 * Inbound texts as the carrier delivers them: `receiveInboundMessage` on the runtime's table, the
 * very function the SMS callback and `admin simulate sms` run (auto-created contact and consent
 * keywords included). One at a time, in the order given, so a STOP and the START after it land
 * in that order.
 */
export async function receiveTexts(info: RuntimeInfo, tenantId: string, texts: SeedText[]): Promise<InboundResult[]> {
  const saved = { TABLE_NAME: process.env.TABLE_NAME, DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT };
  process.env.TABLE_NAME = info.tableName;
  process.env.DYNAMODB_ENDPOINT = info.dynamodbEndpoint;
  try {
    // The shared module reads the two variables when first imported, which is now.
    const { receiveInboundMessage } = await import('../../../lambdas/contexts/texting/receiving');
    const results: InboundResult[] = [];
    for (const text of texts)
      results.push(await receiveInboundMessage(tenantId, { ...text, messageSid: text.messageSid ?? newMessageSid() }));
    return results;
  } finally {
    // Later runtimes spawned by this worker inherit its environment; leave it as it was.
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
