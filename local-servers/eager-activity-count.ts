// How many activities the Temporal server has handed to workers eagerly (in the reply to the
// workflow task that scheduled them, no task-queue round trip): its activity_eager_execution counter,
// summed over every series, from its Prometheus endpoint. Only the multi-service server publishes it
// here (local-servers/postgres-server.ts); the bench and the PostgreSQL test profile read it.

/**
 * The counter once it is current: the server publishes its counters to /metrics about once a second,
 * so this reads until two reads a second apart agree (the increments of runs just ended are in).
 */
export async function eagerActivityCount(metricsUrl: string): Promise<number> {
  const read = async (): Promise<number> => {
    const text = await (await fetch(metricsUrl)).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (/^activity_eager_execution[{ ]/.test(line)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  };
  let last = await read();
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 1_100));
    const now = await read();
    if (now === last) return now;
    last = now;
  }
  return last;
}
