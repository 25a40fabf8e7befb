import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Item } from '../../shared/table/dynamo';

/**
 * One row change from the table's stream (NEW_AND_OLD_IMAGES), unmarshalled. Both the router
 * Lambda (DynamoDB Streams event records) and the local pipeline (GetRecords results) turn
 * their records into this, so event derivation is one pure function over one shape.
 */
export type StreamChange = {
  /** The stream record's eventID: stable across replays of the same record. */
  eventId: string;
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  /** Milliseconds since the epoch (the stream gives seconds in Lambda events, a Date in the SDK). */
  approximateCreationMs: number;
  newImage?: Item;
  oldImage?: Item;
};

type RawImage = Record<string, unknown> | undefined;

export type RawStreamRecord = {
  eventID?: string;
  eventName?: string;
  approximateCreationMs?: number;
  newImage?: RawImage;
  oldImage?: RawImage;
};

const EVENT_NAMES = new Set(['INSERT', 'MODIFY', 'REMOVE']);

// Lambda's and the streams SDK's AttributeValue types differ only nominally; the wire shape is one.
const image = (raw: RawImage): Item | undefined =>
  raw ? unmarshall(raw as Record<string, AttributeValue>) : undefined;

/** Undefined for a record that lacks what derivation needs (never seen from a real stream). */
export function toStreamChange(raw: RawStreamRecord): StreamChange | undefined {
  if (!raw.eventID || !raw.eventName || !EVENT_NAMES.has(raw.eventName) || raw.approximateCreationMs === undefined)
    return undefined;
  return {
    eventId: raw.eventID,
    eventName: raw.eventName as StreamChange['eventName'],
    approximateCreationMs: raw.approximateCreationMs,
    newImage: image(raw.newImage),
    oldImage: image(raw.oldImage),
  };
}
