import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { uuidv7 } from '../../shared/ids';
import { CONDITION, isConditionalCheckFailed, num, str, type Item } from '../../shared/table/dynamo';
import { PREFIX, tenantPk } from '../../shared/table/keys';
import { CHANGED_AT, ROW_TYPES } from '../../shared/table/row-types';
import { withRowSequenceBump } from '../../shared/table/row-sequence';
import { updateExpression, type Condition, type UpdateExpression } from '../../shared/table/update-expression';

/**
 * Voicemails: one row per recorded call leg, keyed by that leg's provider sid so the recording
 * and the transcription callbacks (which arrive in either order, and may repeat) find the same
 * row. The webhook router raises `voicemail.received` when `recordingReady` turns true, which
 * happens exactly once (a conditional flip) and only when the recording is complete and the
 * row knows both numbers; a transcript stored before that travels with the event, one stored
 * after stays on the row. Every write is an upsert (UpdateItem), so nothing reads first.
 */
export const voicemailKey = (tenantId: string, providerCallSid: string) => ({
  pk: tenantPk(tenantId),
  sk: `${PREFIX.voicemail}${providerCallSid}`,
});

/** The row's fields as the webhook events module reads them (lambdas/contexts/webhooks/events.ts). */
export type Voicemail = {
  id: string;
  tenantId: string;
  callId: string | null;
  fromNumber: string | null;
  toNumber: string | null;
  recordingReady: boolean;
  transcript: string | null;
  createdAt: string;
  durationSec: number | null;
};

export function fromItem(item: Item): Voicemail {
  return {
    id: item.id as string,
    tenantId: item.tenantId as string,
    callId: str(item.callId),
    fromNumber: str(item.fromNumber),
    toNumber: str(item.toNumber),
    recordingReady: item.recordingReady === true,
    transcript: str(item.transcript),
    createdAt: item.createdAt as string,
    durationSec: num(item.durationSec),
  };
}

/** Who the voicemail is from and to, and its call when the call is known. */
export type VoicemailParties = { fromNumber: string; toNumber: string; callId: string | null };

export async function getVoicemail(tenantId: string, providerCallSid: string): Promise<Voicemail | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: voicemailKey(tenantId, providerCallSid), ConsistentRead: true }),
  );
  return Item ? fromItem(Item) : undefined;
}

type Fields = Record<string, unknown>;

/**
 * `set` written, `keep` written only where absent (first writer wins: id, createdAt); a fact not known (null) is left
 * as it is.
 */
function upsertExpression(set: Fields, keep: Fields, condition?: Condition): UpdateExpression {
  const known = (fields: Fields) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null));
  // Each fact may show in the voicemail.received event: every write counts in the row's sequence number.
  return updateExpression(withRowSequenceBump({ set: known(set), setIfAbsent: known(keep) }), condition);
}

async function upsert(
  tenantId: string,
  providerCallSid: string,
  set: Fields,
  keep: Fields,
  createdAt: Date,
): Promise<void> {
  await dynamo.send(
    new UpdateCommand({
      TableName: TABLE_NAME,
      Key: voicemailKey(tenantId, providerCallSid),
      ...upsertExpression(
        { type: ROW_TYPES.voicemail, tenantId, ...set },
        { id: uuidv7(createdAt), createdAt: createdAt.toISOString(), recordingReady: false, ...keep },
      ),
    }),
  );
}

const partyFields = (parties: VoicemailParties | undefined) => ({
  set: { callId: parties?.callId ?? undefined },
  keep: { fromNumber: parties?.fromNumber, toNumber: parties?.toNumber },
});

/** The recording is complete (Twilio's RecordingStatus `completed`). */
export async function recordVoicemailRecording(
  tenantId: string,
  input: {
    providerCallSid: string;
    recordingSid: string;
    durationSec: number | null;
    createdAt: Date;
    parties?: VoicemailParties;
  },
): Promise<void> {
  const parties = partyFields(input.parties);
  await upsert(
    tenantId,
    input.providerCallSid,
    { recordingSid: input.recordingSid, recordingCompleted: true, durationSec: input.durationSec, ...parties.set },
    parties.keep,
    input.createdAt,
  );
  await markReadyIfComplete(tenantId, input.providerCallSid);
}

/** The transcript, whenever it arrives: before the recording is ready it goes out with the event. */
export async function recordVoicemailTranscript(
  tenantId: string,
  input: { providerCallSid: string; transcript: string; receivedAt: Date; parties?: VoicemailParties },
): Promise<void> {
  const parties = partyFields(input.parties);
  await upsert(
    tenantId,
    input.providerCallSid,
    { transcript: input.transcript, ...parties.set },
    parties.keep,
    input.receivedAt,
  );
  await markReadyIfComplete(tenantId, input.providerCallSid);
}

/**
 * A call just became known: a voicemail recorded before it (whose callback named no numbers)
 * learns its numbers and call id now. Touches only an existing row.
 */
export async function attachCallToVoicemail(
  tenantId: string,
  providerCallSid: string,
  parties: VoicemailParties,
): Promise<void> {
  // Most calls have no voicemail: a strongly consistent read finds that for a read's price, where the conditional
  // write alone would be refused at a write's. A voicemail written after this read looks for the call itself.
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: TABLE_NAME,
      Key: voicemailKey(tenantId, providerCallSid),
      ConsistentRead: true,
      ProjectionExpression: 'pk',
    }),
  );
  if (!Item) return;
  const fields = partyFields(parties);
  const expression = upsertExpression(fields.set, fields.keep, { expression: CONDITION.rowExists });
  try {
    await dynamo.send(
      new UpdateCommand({ TableName: TABLE_NAME, Key: voicemailKey(tenantId, providerCallSid), ...expression }),
    );
  } catch (err) {
    if (isConditionalCheckFailed(err)) return; // no voicemail on this call
    throw err;
  }
  await markReadyIfComplete(tenantId, providerCallSid);
}

/** The one false -> true flip of `recordingReady`; whoever completes the row last makes it. */
async function markReadyIfComplete(tenantId: string, providerCallSid: string): Promise<void> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: voicemailKey(tenantId, providerCallSid),
        // The flip is the voicemail.received event: its time, to the millisecond (CHANGED_AT).
        ...updateExpression(withRowSequenceBump({ set: { recordingReady: true, [CHANGED_AT]: Date.now() } }), {
          expression:
            '#recordingCompleted = :true AND attribute_exists(#fromNumber) AND attribute_exists(#toNumber) AND ' +
            '#recordingReady = :false',
          names: { '#recordingCompleted': 'recordingCompleted', '#fromNumber': 'fromNumber', '#toNumber': 'toNumber' },
          values: { ':true': true, ':false': false },
        }),
      }),
    );
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err; // not complete yet, or already ready
  }
}
