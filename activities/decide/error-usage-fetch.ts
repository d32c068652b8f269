// A provider that bills an error answer may report its usage beside the error, at the top of the
// body as a 200 answer has it ({"error": {...}, "usage": {...}}), or inside the error object. The
// openai client keeps only the body's `error` object on its APIError, so usage beside it would be
// lost: the attempt would be neither charged nor counted against the dollar budget. This fetch
// moves such usage into the error object, where the decide activity reads it.

export function errorUsageFetch(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    if (res.status < 400 || !res.headers.get('content-type')?.includes('json')) return res;
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      // What the client itself does with an error body it cannot read: its message is the text.
      text = err instanceof Error ? err.message : String(err);
    }
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    headers.delete('content-encoding'); // already decoded
    const out = new Response(withUsageInError(text), { status: res.status, statusText: res.statusText, headers });
    // The client reads url for its logs and error messages.
    Object.defineProperty(out, 'url', { value: res.url });
    return out;
  };
}

/** The body with a top-level `usage` copied into its `error` object (when there is one without usage). */
export function withUsageInError(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return text;
  const { error, usage } = body as { error?: unknown; usage?: unknown };
  if (typeof usage !== 'object' || usage === null) return text;
  if (typeof error !== 'object' || error === null || Array.isArray(error) || 'usage' in error) return text;
  return JSON.stringify({ ...body, error: { ...error, usage } });
}
