import { ApiError, api, type Schemas } from "../../api/client";

export type Health = Schemas["Health"];
export type ComponentHealth = Schemas["ComponentHealth"];
export type ComponentStatus = Schemas["ComponentHealthStatusEnum"];

export const healthKeys = {
  all: ["health"] as const,
};

/**
 * Fetches the studio's health report. A 503 still carries a full report (the
 * studio answers but a dependency does not), so it resolves rather than throws;
 * only an unreachable or misbehaving API throws.
 */
export async function fetchHealth(signal?: AbortSignal): Promise<Health> {
  let result;
  try {
    result = await api.GET("/api/health", { signal });
  } catch (cause) {
    if (signal?.aborted) throw cause;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new ApiError(`The studio API did not answer: ${reason}`, null);
  }
  const { data, error, response } = result;
  if (data) return data;
  if (response.status === 503 && isHealth(error)) return error;
  throw new ApiError(
    `The studio API answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""} to /api/health.`,
    response.status,
  );
}

function isHealth(body: unknown): body is Health {
  return (
    typeof body === "object" &&
    body !== null &&
    "status" in body &&
    "components" in body &&
    typeof body.components === "object"
  );
}
