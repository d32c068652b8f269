// The HTTP answer of an LLM endpoint is untrusted too: a hostile or broken server can send
// megabytes (or gigabytes) that would take the worker's memory and block its event loop long
// enough to miss heartbeats. This fetch stops reading once a response body passes a byte limit
// (counted after decompression), so the client never holds more than that.

export class ResponseTooLargeError extends Error {
  override name = 'ResponseTooLargeError';
  constructor(
    /** At least this many bytes were sent (the declared length, or what was read before stopping). */
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`LLM response body exceeds ${limit} bytes (${bytes} bytes or more)`);
  }
}

export function limitedFetch(limitBytes: number, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (!res.body) return res;
    const original = res.body;
    // Errors surface when the body is read (not from fetch itself), so the client reports them as
    // they are instead of as a connection failure.
    if (Number.isFinite(declared) && declared > limitBytes && !res.headers.get('content-encoding')) {
      void original.cancel().catch(() => undefined);
      return withBody(
        res,
        new ReadableStream({ start: (c) => c.error(new ResponseTooLargeError(declared, limitBytes)) }),
      );
    }
    const reader = original.getReader();
    let seen = 0;
    const limited = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen += value.byteLength;
        if (seen > limitBytes) {
          await reader.cancel().catch(() => undefined);
          controller.error(new ResponseTooLargeError(seen, limitBytes));
          return;
        }
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return withBody(res, limited);
  };
}

function withBody(res: Response, body: ReadableStream<Uint8Array>): Response {
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  headers.delete('content-encoding'); // already decoded by fetch
  const out = new Response(body, { status: res.status, statusText: res.statusText, headers });
  // The client reads url for its logs and error messages.
  Object.defineProperty(out, 'url', { value: res.url });
  return out;
}

/** The ResponseTooLargeError behind err, if any (clients may wrap errors in `cause`). */
export function responseTooLarge(err: unknown): ResponseTooLargeError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ResponseTooLargeError) return e;
  }
  return undefined;
}
