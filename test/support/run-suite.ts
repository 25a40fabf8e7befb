/**
 * `npm test`: the checks (`npm run typecheck`, `npm run lint`) and Jest at the same time rather
 * than one after the other. Jest's workers spend part of the run waiting on DynamoDB Local, the
 * runtimes and HTTP, and the checks (about 35 s of CPU, single-threaded each) use that time: at
 * the lowest CPU priority, so they never slow a test (the races and the fault runs are timed by
 * the CPU they get). Jest's output streams as usual; each check's output is held and printed once
 * Jest is done, so the two never interleave. Exits 0 only when every part passed; arguments go to
 * Jest (`npm test -- test/unit/ids.test.ts`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants, setPriority } from 'node:os';
import { resolve } from 'node:path';

const REPO_ROOT = resolve(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

type Part = { name: string; child: ChildProcess; output: string[]; exited: Promise<number> };

/**
 * A part of the run; a `background` one has its output held and the lowest priority, which the processes it starts
 * inherit.
 */
function start(name: string, command: string, args: string[], background: boolean): Part {
  const child = spawn(command, args, { cwd: REPO_ROOT, stdio: background ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  if (background && child.pid !== undefined) {
    try {
      setPriority(child.pid, constants.priority.PRIORITY_LOW);
    } catch {
      // Not allowed here (some containers): the check runs at normal priority, only the timing differs.
    }
  }
  const output: string[] = [];
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  const exited = new Promise<number>((done) => {
    child.once('error', (err) => {
      output.push(`${err.message}\n`);
      done(1);
    });
    child.once('close', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
  return { name, child, output, exited };
}

const checks = [
  start('typecheck', NPM, ['run', '-s', 'typecheck'], true),
  start('lint', NPM, ['run', '-s', 'lint'], true),
];
const jest = start(
  'jest',
  process.execPath,
  [resolve(REPO_ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), ...process.argv.slice(2)],
  false,
);
const parts = [...checks, jest];

// A signal for this process alone (a CI timeout) reaches every part. Ctrl-C reaches them all from
// the terminal already: Jest then stops its DynamoDB Local itself, and a second signal could cut
// that short, so SIGINT is passed on only to a part still running after a few seconds.
const stillRunning = () => parts.filter((part) => part.child.exitCode === null && part.child.signalCode === null);
for (const signal of ['SIGTERM', 'SIGHUP'] as const)
  process.on(signal, () => stillRunning().forEach((part) => part.child.kill(signal)));
process.on('SIGINT', () =>
  setTimeout(() => stillRunning().forEach((part) => part.child.kill('SIGTERM')), 5_000).unref(),
);

void (async () => {
  const jestCode = await jest.exited;
  const results = await Promise.all(checks.map(async (check) => ({ check, code: await check.exited })));
  for (const { check, code } of results) {
    process.stdout.write(
      `\n> npm run ${check.name}: ${code === 0 ? 'passed' : `failed (exit code ${code})`}\n${check.output.join('')}`,
    );
  }
  process.exitCode = jestCode !== 0 ? jestCode : results.some(({ code }) => code !== 0) ? 1 : 0;
})();
