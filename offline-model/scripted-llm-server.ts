// A real HTTP server that speaks the OpenAI Chat Completions protocol, scripted per workflow.
// Tests and the offline demo point the real `openai` client at it, so everything between the
// agent and the wire (headers, signals, error classes, JSON parsing) runs for real.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** As OpenAI reports prompt caching: the prompt tokens served from the cache. */
  prompt_tokens_details?: { cached_tokens: number };
}

export type Reply =
  /** content = JSON.stringify(action) */
  | { action: unknown; usage?: Partial<Usage>; delayMs?: number }
  /** raw content: malformed JSON, prose, huge strings ... */
  | { content: string; usage?: Partial<Usage>; delayMs?: number }
  /** raw tool calls (native tool calling), arguments as sent: malformed ones, several in one answer ... */
  | {
      toolCalls: Array<{ name: string; arguments: string }>;
      content?: string | null;
      usage?: Partial<Usage>;
      delayMs?: number;
    }
  /** a 200 answer without a message (no choices), still reporting usage: malformed output that was paid for */
  | { noMessage: true; usage?: Partial<Usage>; delayMs?: number }
  /** HTTP error; body defaults to an OpenAI-style {error:{message,type,code}}; a string body is sent as text/plain */
  | { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number }
  /** never answers; the request stays open until the client aborts or the server closes */
  | { hang: true };

export interface RecordedRequest {
  id: number;
  path: string;
  method: string;
  /** lower-cased names; repeated headers joined with ', ' */
  headers: Record<string, string>;
  /** parsed JSON body, the raw text if it was not JSON, undefined if empty */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test script's view of any JSON body
  body: any;
  idempotencyKey?: string;
  workflowId?: string;
  /** The decision's step, read from a `...:decide:<step>` key. */
  step?: number;
  receivedAt: number;
  /** the client closed the connection before a reply was written */
  aborted: boolean;
  closedAt?: number;
  /** HTTP status that was written, if any */
  status?: number;
}

/**
 * Array scripts are consumed one reply per request, in order (retries of the same step consume
 * the next reply too, which is how "429 then success" is scripted). Function scripts get the
 * 0-based number of requests this workflow has made so far.
 */
export type Script = Reply[] | ((req: RecordedRequest, indexForThisWorkflow: number) => Reply | Promise<Reply>);

export interface StartOptions {
  /** 0 (default) picks a free port */
  port?: number;
  /** used for requests whose workflow has no script of its own (and for requests without a key) */
  defaultScript?: Script;
  log?: (line: string) => void;
  /**
   * A provider's rate limit: a reply that would take the tokens answered in the last minute above
   * this is refused with 429 and a Retry-After (seconds until enough of the minute has passed).
   */
  tokensPerMinute?: number;
}

/** What the provider's rate limit saw (`tokensPerMinute`). */
export interface RateLimitStats {
  tokensPerMinute: number | undefined;
  /** The most tokens answered within any one minute (sliding window, measured at each answer). */
  maxTokensPerMinute: number;
  /** Requests refused with 429 for the limit. */
  refused: number;
  answered: number;
}

const DEFAULT_USAGE: Usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
const MODEL_IDS = ['scripted-llm', 'gpt-4.1-mini'];
/** Answers a request once (a string body as text, anything else as JSON); nothing once the client is gone. */
type Send = (status: number, body: unknown, extraHeaders?: Record<string, string>) => void;

export class ScriptedLlmServer {
  readonly baseUrl: string;
  private readonly records: RecordedRequest[] = [];
  private readonly scripts = new Map<string, Script>();
  /** requests seen per workflow ('' = no Idempotency-Key); drives array scripts and the index argument */
  private readonly counters = new Map<string, number>();
  private readonly waiters = new Set<{ check: (r: RecordedRequest) => void; fail: (e: Error) => void }>();
  private nextId = 1;
  private closing = false;
  /** Answers within the last minute: when, how many tokens (the rate limit's window). */
  private window: Array<{ at: number; tokens: number }> = [];
  private readonly limitStats: RateLimitStats;

  private constructor(
    private readonly server: http.Server,
    port: number,
    private readonly defaultScript: Script | undefined,
    private readonly log: (line: string) => void,
    private readonly tokensPerMinute: number | undefined,
  ) {
    this.baseUrl = `http://127.0.0.1:${port}/v1`;
    this.limitStats = { tokensPerMinute, maxTokensPerMinute: 0, refused: 0, answered: 0 };
  }

  /** What the provider-side rate limit saw so far. */
  rateLimitStats(): RateLimitStats {
    return { ...this.limitStats };
  }

  /**
   * The provider's limit: admits `tokens` now (and records them), or says after how many seconds
   * enough of the window will have passed.
   */
  private admit(tokens: number, now: number): { retryAfterS: number } | undefined {
    this.window = this.window.filter((e) => e.at > now - 60_000);
    let inWindow = this.window.reduce((n, e) => n + e.tokens, 0);
    const limit = this.tokensPerMinute;
    if (limit !== undefined && inWindow + tokens > limit) {
      let toFree = inWindow + tokens - limit;
      let freeAt = now + 60_000;
      for (const e of this.window) {
        toFree -= e.tokens;
        if (toFree <= 0) {
          freeAt = e.at + 60_000;
          break;
        }
      }
      this.limitStats.refused++;
      return { retryAfterS: Math.max(1, Math.ceil((freeAt - now) / 1000)) };
    }
    this.window.push({ at: now, tokens });
    inWindow += tokens;
    this.limitStats.answered++;
    this.limitStats.maxTokensPerMinute = Math.max(this.limitStats.maxTokensPerMinute, inWindow);
    return undefined;
  }

  static async start(opts: StartOptions = {}): Promise<ScriptedLlmServer> {
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    const self = new ScriptedLlmServer(server, port, opts.defaultScript, opts.log ?? (() => {}), opts.tokensPerMinute);
    server.on('request', (req, res) => void self.handle(req, res));
    return self;
  }

  /** Replaces the script of a workflow and restarts its reply cursor at 0. */
  script(workflowId: string, script: Script): void {
    this.scripts.set(workflowId, script);
    this.counters.set(workflowId, 0);
  }

  requests(workflowId?: string): RecordedRequest[] {
    return workflowId === undefined ? [...this.records] : this.records.filter((r) => r.workflowId === workflowId);
  }

  /** Resolves with the first recorded request matching pred, now or later (records are live objects). */
  waitFor(pred: (r: RecordedRequest) => boolean, timeoutMs = 5000): Promise<RecordedRequest> {
    return new Promise((resolve, reject) => {
      const waiter = {
        check: (r: RecordedRequest) => {
          let hit: boolean;
          try {
            hit = pred(r);
          } catch (err) {
            done();
            reject(err);
            return;
          }
          if (hit) {
            done();
            resolve(r);
          }
        },
        fail: (err: Error) => {
          done();
          reject(err);
        },
      };
      const timer = setTimeout(
        () =>
          waiter.fail(
            new Error(
              `scripted LLM: waitFor timed out after ${timeoutMs} ms (${this.records.length} requests recorded)`,
            ),
          ),
        timeoutMs,
      );
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      this.waiters.add(waiter);
      for (const r of this.records) {
        if (!this.waiters.has(waiter)) return;
        waiter.check(r);
      }
      if (this.closing && this.waiters.has(waiter)) waiter.fail(new Error('scripted LLM: server closed'));
    });
  }

  /** Resolves when a matching request was closed by the client before its reply was written. */
  waitForAbort(pred: (r: RecordedRequest) => boolean, timeoutMs = 5000): Promise<RecordedRequest> {
    return this.waitFor((r) => r.aborted && pred(r), timeoutMs);
  }

  /** Stops listening and destroys every open socket, hanging requests included. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const w of [...this.waiters]) w.fail(new Error('scripted LLM: server closed'));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private notify(r: RecordedRequest): void {
    for (const w of [...this.waiters]) w.check(r);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    // Listen before reading the body so an early disconnect is not missed. A close before we
    // replied is a client abort, unless we are the ones tearing the sockets down.
    const clientGone = new AbortController();
    let replied = false;
    // Assigned once the body is read; the close handler above may run before that.
    // eslint-disable-next-line prefer-const
    let rec: RecordedRequest | undefined;
    res.on('close', () => {
      if (replied) return;
      if (!this.closing) clientGone.abort();
      if (rec) this.markClosed(rec, !this.closing);
    });

    let raw: string;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      raw = Buffer.concat(chunks).toString('utf8');
    } catch {
      return; // client vanished mid-body; nothing useful to record
    }

    const current = this.record(req, raw, receivedAt);
    rec = current;
    if (res.destroyed || clientGone.signal.aborted) {
      this.markClosed(current, !this.closing);
      return;
    }

    const send: Send = (status, body, extraHeaders = {}) => {
      if (res.destroyed || clientGone.signal.aborted || replied) return;
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      const lowered: Record<string, string> = {};
      for (const [k, v] of Object.entries(extraHeaders)) lowered[k.toLowerCase()] = v;
      replied = true;
      res.writeHead(status, {
        'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
        'content-length': String(Buffer.byteLength(text)),
        'x-request-id': `req_scripted_${current.id}`,
        ...lowered,
      });
      res.end(text);
      current.status = status;
      current.closedAt = Date.now();
      this.notify(current);
    };

    const tag = `#${current.id} ${current.method} ${current.path} [${current.idempotencyKey ?? 'no key'}]`;
    if (current.method === 'GET' && current.path === '/v1/models') {
      const created = Math.floor(Date.now() / 1000);
      send(200, {
        object: 'list',
        data: MODEL_IDS.map((id) => ({ id, object: 'model', created, owned_by: 'scripted' })),
      });
      return;
    }
    if (current.method !== 'POST' || current.path !== '/v1/chat/completions') {
      this.log(`scripted LLM ${tag} -> 404`);
      send(404, errorBody(404, `scripted LLM: no route for ${current.method} ${current.path}`));
      return;
    }
    if (typeof current.body !== 'object' || current.body === null) {
      this.log(`scripted LLM ${tag} -> 400 (body is not a JSON object)`);
      send(400, errorBody(400, 'scripted LLM: request body is not a JSON object'));
      return;
    }

    await this.answer(current, tag, send, clientGone.signal);
  }

  /** A request, recorded (and waiters told) before it is answered. */
  private record(req: http.IncomingMessage, raw: string, receivedAt: number): RecordedRequest {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    const idempotencyKey = headers['idempotency-key'];
    const current: RecordedRequest = {
      id: this.nextId++,
      path: (req.url ?? '/').split('?')[0] ?? '/',
      method: req.method ?? 'GET',
      headers,
      body: parseBody(raw),
      ...(idempotencyKey !== undefined
        ? { idempotencyKey, workflowId: this.workflowIdFor(idempotencyKey), ...stepOf(idempotencyKey) }
        : {}),
      receivedAt,
      aborted: false,
    };
    this.records.push(current);
    this.notify(current);
    return current;
  }

  /** A chat completion request: its scripted reply (a hang, a delay, an error status, a 429, an answer). */
  private async answer(current: RecordedRequest, tag: string, send: Send, clientGone: AbortSignal): Promise<void> {
    const reply = await this.nextReply(current);
    if ('hang' in reply) {
      this.log(`scripted LLM ${tag} -> hang`);
      return; // the close listener records the abort
    }
    if (reply.delayMs !== undefined && reply.delayMs > 0 && !(await sleep(reply.delayMs, clientGone))) return;

    if ('status' in reply) {
      this.log(`scripted LLM ${tag} -> ${reply.status}`);
      send(reply.status, reply.body === undefined ? errorBody(reply.status) : reply.body, reply.headers);
      return;
    }
    const usage = { ...DEFAULT_USAGE, ...reply.usage };
    if (reply.usage?.total_tokens === undefined) usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const limited = this.admit(usage.total_tokens, Date.now());
    if (limited) {
      this.log(`scripted LLM ${tag} -> 429 (tokens per minute; retry after ${limited.retryAfterS} s)`);
      send(429, errorBody(429, 'scripted LLM: rate limit reached for tokens per minute'), {
        'retry-after': String(limited.retryAfterS),
      });
      return;
    }
    if ('noMessage' in reply) {
      this.log(`scripted LLM ${tag} -> 200 without choices`);
      const model = typeof current.body.model === 'string' ? current.body.model : 'scripted-llm';
      send(200, {
        id: `chatcmpl-scripted-${current.id}`,
        object: 'chat.completion',
        created: 0,
        model,
        choices: [],
        usage,
      });
      return;
    }
    // JSON.stringify(undefined) is undefined; keep content a string so the client always parses.
    const content =
      'action' in reply
        ? (JSON.stringify(reply.action) ?? 'null')
        : 'toolCalls' in reply
          ? JSON.stringify(reply.toolCalls)
          : reply.content;
    this.log(`scripted LLM ${tag} -> 200 ${content.length > 200 ? `${content.slice(0, 200)}...` : content}`);
    // A request that offers tools gets a scripted action the way such a model answers: a tool call.
    const message =
      'toolCalls' in reply
        ? {
            role: 'assistant',
            refusal: null,
            content: reply.content ?? null,
            tool_calls: reply.toolCalls.map((call, i) => ({
              id: `call_scripted_${current.id}_${i}`,
              type: 'function',
              function: call,
            })),
          }
        : 'action' in reply && Array.isArray(current.body?.tools)
          ? { role: 'assistant', refusal: null, ...toolCallAnswer(reply.action, current.body.tools, current.id) }
          : { role: 'assistant', content, refusal: null };
    send(200, {
      id: `chatcmpl-scripted-${current.id}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: typeof current.body.model === 'string' ? current.body.model : 'scripted-llm',
      choices: [{ index: 0, message, logprobs: null, finish_reason: 'tool_calls' in message ? 'tool_calls' : 'stop' }],
      usage,
      system_fingerprint: 'fp_scripted',
    });
  }

  private markClosed(rec: RecordedRequest, byClient: boolean): void {
    if (rec.closedAt !== undefined) return;
    rec.closedAt = Date.now();
    rec.aborted = byClient;
    if (byClient) this.log(`scripted LLM #${rec.id} [${rec.idempotencyKey ?? 'no key'}] aborted by client`);
    this.notify(rec);
  }

  private async nextReply(rec: RecordedRequest): Promise<Reply> {
    const key = rec.workflowId ?? '';
    const own = rec.workflowId !== undefined ? this.scripts.get(rec.workflowId) : undefined;
    const script = own ?? this.defaultScript;
    const who = rec.workflowId ?? 'a request without Idempotency-Key';
    if (script === undefined) return { status: 500, body: errorBody(500, `scripted LLM: no script for ${who}`) };
    const index = this.counters.get(key) ?? 0;
    this.counters.set(key, index + 1);
    if (Array.isArray(script)) {
      const reply = script[index];
      if (reply !== undefined) return reply;
      const message = `scripted LLM: script exhausted for ${who}`;
      this.log(`${message} (request #${rec.id}, index ${index}, script length ${script.length})`);
      return { status: 500, body: errorBody(500, message) };
    }
    try {
      return await script(rec, index);
    } catch (err) {
      const message = `scripted LLM: script threw for ${who}: ${err instanceof Error ? err.message : String(err)}`;
      this.log(message);
      return { status: 500, body: errorBody(500, message) };
    }
  }

  // Keys look like `<workflowId>:<first run id>:decide:<step>` (or, from older callers,
  // `<workflowId>:decide:<step>`); an explicitly scripted id wins (longest prefix) so ids that
  // contain ':' still route correctly.
  private workflowIdFor(key: string): string {
    let best: string | undefined;
    for (const id of this.scripts.keys()) {
      if (key.startsWith(`${id}:`) && (best === undefined || id.length > best.length)) best = id;
    }
    if (best !== undefined) return best;
    const decide = key.lastIndexOf(':decide:');
    if (decide > 0) return key.slice(0, decide).replace(RUN_ID_SUFFIX, '');
    const colon = key.indexOf(':');
    return colon > 0 ? key.slice(0, colon) : key;
  }
}

const RUN_ID_SUFFIX = /:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function stepOf(key: string): { step?: number } {
  const match = /:decide:(\d+)$/.exec(key);
  return match ? { step: Number(match[1]) } : {};
}

function parseBody(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** The shape OpenAI sends, so the client fills err.error / err.code / err.type as it would in production. */
export function errorBody(
  status: number,
  message = `scripted LLM: HTTP ${status}`,
): { error: { message: string; type: string; param: null; code: string | null } } {
  const [type, code]: [string, string | null] =
    status === 401
      ? ['invalid_request_error', 'invalid_api_key']
      : status === 403
        ? ['invalid_request_error', 'unsupported_country_region_territory']
        : status === 404
          ? ['invalid_request_error', 'model_not_found']
          : status === 429
            ? ['requests', 'rate_limit_exceeded']
            : status >= 500
              ? ['server_error', null]
              : ['invalid_request_error', null];
  return { error: { message, type, param: null, code } };
}

/** Resolves true after ms, or false as soon as the signal aborts (so nothing is written to a dead socket). */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A scripted action as a tool-calling model answers it (docs/model-protocol.md): a tool call for a
 * tool (under the function name the request offered it as), final_answer or escalate for those
 * kinds, plain text for a message. Anything else (a shape the contract refuses) goes as content.
 */
export function toolCallAnswer(
  action: unknown,
  offered: unknown[],
  id: number,
): { content: string | null; tool_calls?: unknown[] } {
  const said = (action as { decision_summary?: unknown } | null)?.decision_summary;
  const call = (name: string, args: unknown) => ({
    // A scripted decision_summary goes as the text beside the call, as a model writes it.
    content: typeof said === 'string' ? said : null,
    tool_calls: [
      { id: `call_scripted_${id}`, type: 'function', function: { name, arguments: JSON.stringify(args) ?? 'null' } },
    ],
  });
  const a = (typeof action === 'object' && action !== null ? action : {}) as Record<string, unknown>;
  const { kind, ...rest } = a;
  if (kind === 'tool' && typeof a.name === 'string') {
    const names = offered.map((t) => (t as { function?: { name?: unknown } }).function?.name);
    const sanitized = a.name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
    const name = names.includes(a.name) ? a.name : names.includes(sanitized) ? sanitized : a.name;
    return call(name, a.args ?? {});
  }
  const { decision_summary: _summary, ...fields } = rest;
  if (kind === 'final') return call('final_answer', fields);
  if (kind === 'escalate') return call('escalate', fields);
  if (kind === 'message' && typeof a.text === 'string') return { content: a.text };
  return { content: JSON.stringify(action) ?? 'null' };
}
