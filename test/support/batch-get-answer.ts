/** A row's key in the single table. */
export type RowKey = { pk: string; sk: string };
type Row = Record<string, unknown>;
export type BatchGetInput = { RequestItems: Record<string, { Keys: RowKey[] }> };

/**
 * A fake BatchGetItem for aws-sdk-client-mock (`ddb.on(BatchGetCommand).callsFake(batchGetAnswer(rowAt))`): each
 * requested key's row from `rowAt`, with its key, the missing ones left out, as DynamoDB answers. DynamoDB keeps no
 * order in the answer, so a test can choose one with `order`.
 */
export const batchGetAnswer =
  (rowAt: (key: RowKey) => Row | undefined, order?: (a: Row, b: Row) => number) =>
  ({ RequestItems }: BatchGetInput) => ({
    Responses: Object.fromEntries(
      Object.entries(RequestItems).map(([table, { Keys }]) => {
        const rows = Keys.flatMap((key) => {
          const row = rowAt(key);
          return row ? [{ ...row, ...key }] : [];
        });
        return [table, order ? rows.sort(order) : rows];
      }),
    ),
  });

/** `batchGetAnswer` over a fixed set of rows, found by their own keys. */
export const batchGetAnswerOf = (...rows: (Row & RowKey)[]) =>
  batchGetAnswer((key) => rows.find((row) => row.pk === key.pk && row.sk === key.sk));
