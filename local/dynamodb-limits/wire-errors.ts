/**
 * The errors the engine answers itself, shaped as DynamoDB sends them over its JSON protocol
 * (HTTP 400, `__type` naming the shape, the members the API model defines), so that any AWS SDK
 * deserializes them into its own exception classes: TransactionCanceledException with
 * CancellationReasons, TransactionConflictException, ThrottlingException with throttlingReasons.
 */
export type WireError = { status: number; body: Record<string, unknown> };

const NAMESPACE = 'com.amazonaws.dynamodb.v20120810';

/** The message DynamoDB sends with a throttled write or read of an on-demand table or index. */
export const TABLE_THROTTLED_MESSAGE =
  'Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or ' +
  'index so please try again shortly. ' +
  'If exceptions persist, check if you have a hot key: ' +
  'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html';

export const INDEX_THROTTLED_MESSAGE =
  'Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is automatically ' +
  'scaling your index so please try again shortly.';

export const TRANSACTION_CONFLICT_MESSAGE = 'Transaction is ongoing for the item.';

/** `ResourceType + OperationType + LimitType`, as the ThrottlingReason shape defines them. */
export type ThrottlingReason = {
  reason: `${'Table' | 'Index'}${'Read' | 'Write'}KeyRangeThroughputExceeded`;
  resource: string;
};

/** Adds to `into` the reasons it does not hold yet (a throttling error names each reason once). */
export function addReasons(into: ThrottlingReason[], more: ThrottlingReason[]): void {
  for (const reason of more)
    if (!into.some((r) => r.reason === reason.reason && r.resource === reason.resource)) into.push(reason);
}

export type CancellationReason = { Code: string; Message?: string; Item?: unknown };

export function transactionCanceled(reasons: CancellationReason[]): WireError {
  return {
    status: 400,
    body: {
      __type: `${NAMESPACE}#TransactionCanceledException`,
      Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
      CancellationReasons: reasons,
    },
  };
}

export const transactionConflictReason = (): CancellationReason => ({
  Code: 'TransactionConflict',
  Message: TRANSACTION_CONFLICT_MESSAGE,
});

export function throttlingReason(reason: ThrottlingReason): CancellationReason {
  return {
    Code: 'ThrottlingError',
    Message: reason.reason.startsWith('Index') ? INDEX_THROTTLED_MESSAGE : TABLE_THROTTLED_MESSAGE,
  };
}

export const NO_CANCELLATION: CancellationReason = { Code: 'None' };

/** A standard write (PutItem, UpdateItem, DeleteItem) on an item an ongoing transaction holds. */
export function transactionConflict(): WireError {
  return {
    status: 400,
    body: { __type: `${NAMESPACE}#TransactionConflictException`, message: 'Transaction is ongoing for the item' },
  };
}

/**
 * A request over a key range's budget on an on-demand table: DynamoDB answers ThrottlingException
 * (ProvisionedThroughputExceededException is the provisioned-mode answer), with the reasons in
 * `throttlingReasons` as that shape names its member (docs/local-engine.md).
 */
export function throttled(reasons: ThrottlingReason[]): WireError {
  const message = reasons.every((r) => r.reason.startsWith('Index'))
    ? INDEX_THROTTLED_MESSAGE
    : TABLE_THROTTLED_MESSAGE;
  return { status: 400, body: { __type: `${NAMESPACE}#ThrottlingException`, message, throttlingReasons: reasons } };
}
