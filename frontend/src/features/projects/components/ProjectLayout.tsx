import { useEffect } from "react";
import { Link, Outlet } from "react-router";

import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { Loading } from "../../../components/Spinner";
import { AlertIcon } from "../../../components/icons";
import { useCurrentProject, useProjectSlug } from "../hooks";
import { rememberProject } from "../pages/HomeRedirect";

/** Everything under `/p/:slug`: checks the project is one of yours, and remembers it. */
export function ProjectLayout() {
  const slug = useProjectSlug();
  const { project, isPending, isError, error, refetch } = useCurrentProject();
  useEffect(() => {
    if (project) rememberProject(project.slug);
  }, [project]);
  if (isPending) return <Loading what="the project" />;
  if (isError) return <ErrorState title="Could not load your projects" error={error} onRetry={() => void refetch()} />;
  if (!project) {
    return (
      <EmptyState icon={<AlertIcon size={26} />} title={`No project “${slug}” for you`} action={<Link to="/">Go to your projects</Link>}>
        It does not exist, or you are not one of its members: ask an owner to invite you.
      </EmptyState>
    );
  }
  return <Outlet />;
}
