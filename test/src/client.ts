import { request as undiciRequest, FormData as UndiciFormData } from 'undici';

/** A small HTTP client for tests and load tools, sending parameters the way Zulip clients do. */
export interface Credentials {
  email: string;
  apiKey: string;
}

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: { get(name: string): string | null };
  body: T & { result: string; msg: string; code?: string };
}

type ParamValue = string | number | boolean | null | object | undefined;
export type Params = Record<string, ParamValue>;

/** Zulip encoding: strings as they are, everything else as JSON text. */
export function encodeParams(params: Params): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    out.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return out;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly creds: Credentials | undefined,
    private readonly opts: { userAgent?: string; host?: string } = {},
  ) {}

  headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { 'user-agent': this.opts.userAgent ?? 'ZulipTestSuite/1.0', ...extra };
    if (this.creds) h.authorization = `Basic ${Buffer.from(`${this.creds.email}:${this.creds.apiKey}`).toString('base64')}`;
    if (this.opts.host) h.host = this.opts.host;
    return h;
  }

  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    params: Params = {},
    o: { encoding?: 'query' | 'form' | 'multipart' | 'json'; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<ApiResponse<T>> {
    const encoding = o.encoding ?? (method === 'GET' ? 'query' : 'form');
    let url = `${this.baseUrl}/api/v1${path}`;
    let body: string | UndiciFormData | undefined;
    const headers = this.headers(o.headers);
    if (encoding === 'query') {
      const q = encodeParams(params).toString();
      if (q) url += `?${q}`;
    } else if (encoding === 'form') {
      body = encodeParams(params).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (encoding === 'json') {
      body = JSON.stringify(params);
      headers['content-type'] = 'application/json';
    } else {
      const fd = new UndiciFormData();
      for (const [k, v] of encodeParams(params)) fd.append(k, v);
      body = fd;
    }
    // undici's request (unlike fetch) sends a Host header of our choosing: realms are chosen by it.
    const res = await undiciRequest(url, { method: method as 'GET', headers, body, signal: o.signal });
    const text = await res.body.text();
    const resHeaders = res.headers;
    const get = (name: string) => {
      const v = resHeaders[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : String(v);
    };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { result: 'not-json', msg: text };
    }
    return { status: res.statusCode, headers: { get }, body: parsed as ApiResponse<T>['body'] };
  }

  get<T = Record<string, unknown>>(path: string, params: Params = {}, o = {}) {
    return this.call<T>('GET', path, params, o);
  }
  post<T = Record<string, unknown>>(path: string, params: Params = {}, o = {}) {
    return this.call<T>('POST', path, params, o);
  }
  put<T = Record<string, unknown>>(path: string, params: Params = {}, o = {}) {
    return this.call<T>('PUT', path, params, o);
  }
  patch<T = Record<string, unknown>>(path: string, params: Params = {}, o = {}) {
    return this.call<T>('PATCH', path, params, o);
  }
  delete<T = Record<string, unknown>>(path: string, params: Params = {}, o = {}) {
    return this.call<T>('DELETE', path, params, o);
  }
}
