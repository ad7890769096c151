import type { Middleware } from "openapi-fetch";
import { afterEach, describe, expect, it } from "vitest";

import { csrfMiddleware, readCsrfToken } from "./client";

type OnRequestParams = Parameters<NonNullable<Middleware["onRequest"]>>[0];

function runMiddleware(request: Request): Request {
  const result = csrfMiddleware.onRequest?.({ request } as OnRequestParams);
  return result instanceof Request ? result : request;
}

function clearCookies() {
  for (const part of document.cookie.split(";")) {
    const name = part.split("=")[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  }
}

describe("readCsrfToken", () => {
  it("finds Django's csrftoken among other cookies", () => {
    expect(readCsrfToken("sessionid=abc; csrftoken=tok%3D123; theme=dark")).toBe("tok=123");
  });

  it("returns undefined when there is no csrftoken cookie", () => {
    expect(readCsrfToken("sessionid=abc; mycsrftoken=nope")).toBeUndefined();
  });
});

describe("csrfMiddleware", () => {
  afterEach(clearCookies);

  it("adds X-CSRFToken to state-changing requests", () => {
    document.cookie = "csrftoken=secret-token; path=/";
    const request = runMiddleware(new Request("http://localhost/api/runs/", { method: "POST" }));
    expect(request.headers.get("X-CSRFToken")).toBe("secret-token");
  });

  it("leaves safe requests alone", () => {
    document.cookie = "csrftoken=secret-token; path=/";
    const request = runMiddleware(new Request("http://localhost/api/health"));
    expect(request.headers.has("X-CSRFToken")).toBe(false);
  });
});
