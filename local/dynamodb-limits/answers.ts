import type { ChargeLine } from './charges';
import type { EngineAnswer } from './engine';
import { parseJson, type UpstreamAnswer } from './upstream';
import type { WireError } from './wire-errors';

/**
 * DynamoDB's error name in an answer's `__type` (`com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException` ->
 * the part after `#`).
 */
export function errorName(json: Record<string, unknown> | undefined): string | undefined {
  const type = json?.__type;
  return typeof type === 'string' ? type.slice(type.indexOf('#') + 1) : undefined;
}

/**
 * DynamoDB Local's answer, passed on: a success as JSON (so its ConsumedCapacity can be set to
 * what AWS charges), anything else byte for byte.
 */
export function upstreamAnswer(
  answer: UpstreamAnswer,
  lines: ChargeLine[],
  options: { capacityList?: boolean } = {},
): EngineAnswer {
  const json = answer.status === 200 ? parseJson(answer.body) : undefined;
  if (json) return { status: 200, json, lines, capacityList: options.capacityList };
  return {
    status: answer.status,
    raw: answer,
    lines,
    error: errorName(parseJson(answer.body)) ?? `HTTP ${answer.status}`,
  };
}

/** An answer the engine makes itself: a refusal (conflict, throttle) in DynamoDB's error shape. */
export function refusal(error: WireError): EngineAnswer {
  return { status: error.status, json: error.body, lines: [], error: errorName(error.body) };
}
