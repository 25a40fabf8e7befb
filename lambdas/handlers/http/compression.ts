/**
 * API Gateway's `minimumCompressionSize` for this API: a response body of at least this many bytes
 * is compressed (gzip or deflate) when the client asks for it with `Accept-Encoding`. The CDK sets it
 * on the REST API and the local runtime compresses by the same rule (local/response-compression.ts).
 * No imports: both read it.
 *
 * 1 KiB: every list page (5-25 KB of JSON, which gzip takes to a fifth or less) and the OpenAPI
 * document are above it; a single resource (a contact or a call, 0.4-0.9 KB), `GET /me` and every
 * Error body are below it. Below 1 KiB a response fits one TCP segment with its headers either way,
 * so compressing it saves no packet and no round trip, and at most a few hundred bytes: $0.09 per GB
 * of data transfer makes that under $0.03 per million responses (docs/decisions.md, "Response
 * compression").
 */
export const MINIMUM_COMPRESSION_BYTES = 1024;
