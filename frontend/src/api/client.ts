/**
 * The typed API client. Paths, parameters and bodies come from `schema.d.ts`,
 * which `npm run gen:api` generates from the studio's OpenAPI schema; never
 * edit that file or write API types by hand.
 */
import createClient, { type Middleware } from "openapi-fetch";

import { ApiError, toApiError } from "./errors";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];

const CSRF_COOKIE = "csrftoken";
const CSRF_HEADER = "X-CSRFToken";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

/** Reads Django's CSRF cookie; undefined when the server has not set one yet. */
export function readCsrfToken(cookie: string = document.cookie): string | undefined {
  for (const part of cookie.split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === CSRF_COOKIE) return decodeURIComponent(rest.join("="));
  }
  return undefined;
}

/** Adds Django's CSRF header to every state-changing request (session auth). */
export const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    if (SAFE_METHODS.has(request.method.toUpperCase())) return undefined;
    const token = readCsrfToken();
    if (token) request.headers.set(CSRF_HEADER, token);
    return request;
  },
};

export { ApiError, FieldErrors, errorMessage } from "./errors";

type ApiResult<T> = { data?: T; error?: unknown; response: Response };

/**
 * Awaits an openapi-fetch call and returns its data, or throws the typed error
 * (`FieldErrors` for validation errors naming fields, `ApiError` otherwise). Every
 * feature's api.ts goes through this, so errors look the same everywhere.
 */
export async function unwrap<T>(call: Promise<ApiResult<T>>): Promise<T> {
  let result: ApiResult<T>;
  try {
    result = await call;
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new ApiError(`The studio API did not answer: ${reason}`, null);
  }
  const { data, error, response } = result;
  if (response.ok) return data as T;
  throw toApiError(error, response);
}

export const api = createClient<paths>({
  // Same origin as the page; an absolute base keeps `new Request()` happy outside browsers.
  baseUrl: globalThis.location?.origin ?? "",
  credentials: "same-origin",
  // Resolve fetch per call (not once at import) so tests can stub it.
  fetch: (request: Request) => globalThis.fetch(request),
});
api.use(csrfMiddleware);
