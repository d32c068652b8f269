// Waiting and retrying against a server that chaos may be restarting: both suites' trials use these.

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Retries a call to the server, by default for up to 2 minutes (a restart takes seconds). */
export async function retry<T>(what: string, fn: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 200; ; wait = Math.min(wait * 2, 2000)) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(err as Error).message.split('\n')[0]}`, { cause: err });
      await delay(wait);
    }
  }
}
