// HTTP calls to a node under test: one request with a deadline, whose network failure is a status (0), not an
// exception, so a caller can count failures; and the variant for calls that must work.

export interface HttpResult<T = unknown> {
  readonly status: number;
  readonly body: T;
}

/** One HTTP call; a network error or client-side timeout is status 0 (never thrown), so callers can count it. */
export async function http<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
  timeoutMs = 10_000,
  headers: Readonly<Record<string, string>> = {},
): Promise<HttpResult<T>> {
  try {
    const response = await fetch(url, {
      method,
      headers: body !== undefined ? { ...headers, 'content-type': 'application/json' } : headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed as T };
  } catch (error) {
    return {
      status: 0,
      body: { error: 'network', message: error instanceof Error ? error.message : String(error) } as T,
    };
  }
}

/** Like http() but throws unless the status is 2xx; for calls that must work. */
export async function httpOk<T = unknown>(method: string, url: string, body?: unknown, timeoutMs = 10_000): Promise<T> {
  const result = await http<T>(method, url, body, timeoutMs);
  if (result.status < 200 || result.status > 299) {
    throw new Error(`${method} ${url} -> ${result.status} ${JSON.stringify(result.body)}`);
  }
  return result.body;
}
