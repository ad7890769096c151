import { ApiError } from "./client";

type Answer<T> = { data?: T; error?: unknown; response: Response };

/** The API's first error message ({"error": {"message"}}), or one naming the status. */
export function apiErrorMessage(error: unknown, response: Response): string {
  if (typeof error === "object" && error !== null && "error" in error) {
    const inner = (error as { error: { message?: unknown } }).error;
    if (typeof inner?.message === "string") return inner.message;
  }
  return `The studio answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}.`;
}

/** The data of a successful openapi-fetch answer; throws `ApiError` with the API's message. */
export async function unwrap<T>(call: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await call;
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new ApiError(`The studio did not answer: ${reason}`, null);
  }
  const { data, error, response } = answer;
  if (response.ok) return data as T;
  throw new ApiError(apiErrorMessage(error, response), response.status);
}
