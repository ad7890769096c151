/**
 * The typed API client. Paths, parameters and bodies come from `schema.d.ts`,
 * which `npm run gen:api` generates from the studio's OpenAPI schema; never
 * edit that file or write API types by hand.
 */
import createClient, { type Middleware } from "openapi-fetch";

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

/** Raised for answers the caller cannot use: network failures, 4xx/5xx, non-JSON. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const api = createClient<paths>({
  // Same origin as the page; an absolute base keeps `new Request()` happy outside browsers.
  baseUrl: globalThis.location?.origin ?? "",
  credentials: "same-origin",
  // Resolve fetch per call (not once at import) so tests can stub it.
  fetch: (request: Request) => globalThis.fetch(request),
});
api.use(csrfMiddleware);
