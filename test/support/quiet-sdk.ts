// The AWS SDK warns once per process that its 2027 releases will need Node 22; the Lambda runtime
// is Node 24 and this machine's Node 20 is supported by the SDK pinned here, so it is noise in tests.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.AWS_REGION ??= 'us-east-1';
process.env.TABLE_NAME ??= 'unit-test-table';
