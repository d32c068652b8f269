// A bounded number of requests in flight: batch operations (cancel --stuck, list --older-than)
// make one or two calls per run, and a namespace may hold thousands of runs.

/** `fn` over every item, at most `limit` at a time; results in the items' order. */
export async function mapPool<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
