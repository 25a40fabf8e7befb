import { randomUUID } from 'node:crypto';

// Runs before each end-to-end test file imports anything (a setup file of the e2e project).
//
// The file's runtimes use the run's one DynamoDB Local (test/support/dynamodb-global-setup.ts,
// started without -sharedDb) rather than a JVM each, and reach their own database there through
// this access key: the runtimes spawned by this file inherit it, and so do the domain modules the
// file loads itself (the in-process operator CLI, seeds), which read it when first imported. A
// runtime that starts its own DynamoDB Local (`inMemory: false`) keeps one database for all keys.
process.env.LOCAL_ENGINE_ACCESS_KEY_ID = `e2e${randomUUID().replace(/-/g, '')}`;
