/** The cached list of a function's versions, kept right the moment a save returns. */
import type { RewardVersion, RewardVersionSummary } from "../api";

/**
 * The versions list with `saved` at its head (newest first, as the API lists them).
 * Set into the query cache as soon as a save returns: until the refetch answered, the
 * stale list made its older head the "latest" version, so the editor and the test panel
 * went back to it for a moment (a test-run started then scored the old code).
 */
export function withSavedVersion(
  list: readonly RewardVersionSummary[] | undefined,
  saved: RewardVersion,
): RewardVersionSummary[] {
  const summary: RewardVersionSummary = {
    id: saved.id,
    function: saved.function,
    number: saved.number,
    code_hash: saved.code_hash,
    entrypoint: saved.entrypoint,
    message: saved.message,
    author: saved.author,
    created_at: saved.created_at,
  };
  return [summary, ...(list ?? []).filter((v) => v.id !== saved.id)];
}
