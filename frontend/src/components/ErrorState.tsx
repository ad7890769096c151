import { ApiError, errorMessage } from "../api/errors";
import { Button, ButtonLink } from "./Button";
import { EmptyState } from "./EmptyState";
import { AlertIcon } from "./icons";

type ErrorStateProps = {
  title: string;
  error: unknown;
  onRetry?: () => void;
  /** Where a page whose object does not exist sends people instead ("All runs"). */
  back?: { to: string; label: string };
};

/** What a page shows when its data could not be loaded: never a blank page. After a 404
 * it offers the way back, not "Try again": asking again gets the same answer. */
export function ErrorState({ title, error, onRetry, back }: ErrorStateProps) {
  const missing = error instanceof ApiError && error.status === 404;
  let action = null;
  if (missing && back) action = <ButtonLink to={back.to}>{back.label}</ButtonLink>;
  else if (!missing && onRetry) action = <Button onClick={onRetry}>Try again</Button>;
  return (
    <EmptyState icon={<AlertIcon size={26} />} tone="error" title={title} action={action}>
      {errorMessage(error)}
    </EmptyState>
  );
}
