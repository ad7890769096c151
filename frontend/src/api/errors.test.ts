import { describe, expect, it } from "vitest";

import { ApiError, FieldErrors, flattenFields, toApiError } from "./errors";

function response(status: number): Response {
  return new Response(null, { status });
}

describe("API errors", () => {
  it("turns a validation error naming fields into FieldErrors keyed by dotted path", () => {
    const body = {
      error: {
        code: "validation_error",
        message: "config.rollout.n: Input should be greater than or equal to 1",
        fields: { "config.rollout.n": ["Input should be greater than or equal to 1"], resources: { cpus: ["Too many."] } },
      },
    };
    const error = toApiError(body, response(400));
    expect(error).toBeInstanceOf(FieldErrors);
    expect((error as FieldErrors).at("config.rollout.n")).toEqual(["Input should be greater than or equal to 1"]);
    expect((error as FieldErrors).at("resources.cpus")).toEqual(["Too many."]);
    expect(error.message).toBe("config.rollout.n: Input should be greater than or equal to 1");
  });

  it("keeps every other error as an ApiError with its code and the server's message", () => {
    const error = toApiError({ error: { code: "not_found", message: "No run 9." } }, response(404));
    expect(error).not.toBeInstanceOf(FieldErrors);
    expect(error).toBeInstanceOf(ApiError);
    expect([error.status, error.code, error.message]).toEqual([404, "not_found", "No run 9."]);
  });

  it("says what happened when the body is not in the API's format (a proxy's 502 page)", () => {
    expect(toApiError("<html>Bad gateway</html>", response(502)).message).toBe("The studio answered 502.");
  });

  it("flattens nested lists of field errors with their index", () => {
    expect(flattenFields({ tags: [{}, ["Too long."]] })).toEqual({ "tags.1": ["Too long."] });
  });
});
