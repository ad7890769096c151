import type { ReactNode } from "react";
import { Navigate, useLocation } from "react-router";

import { ErrorState } from "../../../components/ErrorState";
import { Loading } from "../../../components/Spinner";
import { useMe } from "../hooks";

/** Renders its children for a signed-in user; sends anyone else to the sign-in page. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const me = useMe();
  const location = useLocation();
  if (me.isPending) return <Loading what="your session" />;
  if (me.isError) return <ErrorState title="The studio did not answer" error={me.error} onRetry={() => void me.refetch()} />;
  if (!me.data) {
    const next = `${location.pathname}${location.search}`;
    return <Navigate to={`/sign-in?next=${encodeURIComponent(next)}`} replace />;
  }
  return children;
}
