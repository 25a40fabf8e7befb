/**
 * Preloaded into the local runtime by the benchmark, and only there:
 *
 *   node --import tsx --import ./bench/support/runtime-preload.ts bin/local.ts ...
 *
 * Attaches the table-call counter to the process-wide DynamoDB client of lambdas/shared/aws.ts (the
 * document client shares the base client's middleware stack, so every command of every handler,
 * of the authorizer and of Powertools' idempotency layer passes through it) and serves the tallies
 * on 127.0.0.1:$BENCH_CONTROL_PORT. Production code is untouched: nothing in lambdas/ knows of it.
 *
 *   GET /stats  -> tallies since the last reset, CPU time and memory of this process, rounds lost by site
 *   POST /reset -> the same, then zeroes the tallies and the rounds lost (CPU time and the memory peak are
 *                  cumulative)
 */
import { createServer } from 'node:http';
import { dynamo } from '../../lambdas/shared/aws';
import { resetRoundsLost, roundsLostBySite } from '../../lambdas/shared/table/rounds-lost';
import { attachTableCallCounter, type CallTally, type CounterStats } from './table-call-counter';

const counter = attachTableCallCounter(dynamo.middlewareStack);

const stats = (tally: CallTally): CounterStats => {
  const memory = process.memoryUsage();
  return {
    ...tally,
    cpuMicros: process.cpuUsage(),
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    roundsLost: roundsLostBySite(),
  };
};

const port = Number(process.env.BENCH_CONTROL_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('runtime-preload: BENCH_CONTROL_PORT must name a port');

const control = createServer((req, res) => {
  const resetting = req.method === 'POST' && req.url === '/reset';
  const tally = resetting ? counter.reset() : counter.tally();
  const answer = JSON.stringify(stats(tally));
  if (resetting) resetRoundsLost();
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(answer);
});
control.listen(port, '127.0.0.1');
control.unref();
