import { ApiError, errorMessage } from "../api/errors";
import { Button } from "./Button";
import { EmptyState } from "./EmptyState";
import { AlertIcon } from "./icons";

type ErrorStateProps = { title: string; error: unknown; onRetry?: () => void };

/** What a page shows when its data could not be loaded: never a blank page. No "Try
 * again" for a 404: asking again gets the same answer. */
export function ErrorState({ title, error, onRetry }: ErrorStateProps) {
  const missing = error instanceof ApiError && error.status === 404;
  return (
    <EmptyState
      icon={<AlertIcon size={26} />}
      tone="error"
      title={title}
      action={onRetry && !missing ? <Button onClick={onRetry}>Try again</Button> : undefined}
    >
      {errorMessage(error)}
    </EmptyState>
  );
}
