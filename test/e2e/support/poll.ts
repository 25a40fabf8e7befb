/**
 * Waits for something another process does (a delivery, a retry, a row) by polling with a
 * deadline: as fast as it happens, never a fixed sleep, and a failure that says what was awaited.
 */
export async function pollUntil<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${JSON.stringify(value)?.slice(0, 1000)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
