/**
 * The API's one error format, `{"error": {"code", "message", "fields"?}}`, as typed
 * errors: a `FieldErrors` when the server named fields (show each at its field), an
 * `ApiError` for the rest (show its message as a toast or an error state).
 */

/** Raised for answers the caller cannot use: network failures, 4xx/5xx, non-JSON. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: string = "error",
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** A validation error whose messages are keyed by the field they name (dotted paths). */
export class FieldErrors extends ApiError {
  constructor(
    message: string,
    status: number,
    readonly fields: Record<string, string[]>,
  ) {
    super(message, status, "validation_error");
    this.name = "FieldErrors";
  }

  /** The messages for `path` (e.g. "name", "config.actor.optim.lr"). */
  at(path: string): string[] {
    return this.fields[path] ?? [];
  }
}

type ErrorBody = { code?: unknown; message?: unknown; fields?: unknown };

/** Flattens DRF's nested field errors into dotted paths: {config: {a: ["x"]}} -> {"config.a": ["x"]}. */
export function flattenFields(fields: unknown, prefix = ""): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (Array.isArray(fields)) {
    const messages = fields.filter((m): m is string => typeof m === "string");
    if (messages.length) out[prefix] = messages;
    fields.forEach((item, index) => {
      if (typeof item === "object" && item !== null) {
        Object.assign(out, flattenFields(item, prefix ? `${prefix}.${index}` : String(index)));
      }
    });
    return out;
  }
  if (typeof fields === "object" && fields !== null) {
    for (const [key, value] of Object.entries(fields)) {
      Object.assign(out, flattenFields(value, prefix ? `${prefix}.${key}` : key));
    }
  }
  return out;
}

/** Turns a failed response's body into the right typed error. */
export function toApiError(body: unknown, response: Response): ApiError {
  const error =
    typeof body === "object" && body !== null && "error" in body
      ? ((body as { error: ErrorBody }).error ?? {})
      : null;
  const status = response.status;
  if (!error) {
    return new ApiError(`The studio answered ${status}${response.statusText ? ` ${response.statusText}` : ""}.`, status);
  }
  const message = typeof error.message === "string" ? error.message : `The studio answered ${status}.`;
  const code = typeof error.code === "string" ? error.code : "error";
  if (error.fields && typeof error.fields === "object") {
    const fields = flattenFields(error.fields);
    if (Object.keys(fields).length) return new FieldErrors(message, status, fields);
  }
  return new ApiError(message, status, code);
}

/** A human sentence for any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
