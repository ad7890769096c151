import { Navigate } from "react-router";

import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { Loading } from "../../../components/Spinner";
import { RunsIcon } from "../../../components/icons";
import { Link } from "react-router";
import { useProjects } from "../hooks";

const LAST_PROJECT_KEY = "rlstudio.lastProject";

export function rememberProject(slug: string) {
  try {
    localStorage.setItem(LAST_PROJECT_KEY, slug);
  } catch {
    // Storage can be disabled; the first project is then the default.
  }
}

export function lastProject(): string | null {
  try {
    return localStorage.getItem(LAST_PROJECT_KEY);
  } catch {
    return null;
  }
}

/** `/`: the last project used (or the first one), else a prompt to create one. */
export function HomeRedirect() {
  const projects = useProjects();
  if (projects.isPending) return <Loading what="your projects" />;
  if (projects.isError) return <ErrorState title="Could not load your projects" error={projects.error} onRetry={() => void projects.refetch()} />;
  const remembered = lastProject();
  const target = projects.data.find((p) => p.slug === remembered) ?? projects.data[0];
  if (target) return <Navigate to={`/p/${target.slug}/runs`} replace />;
  return (
    <EmptyState icon={<RunsIcon size={26} />} title="You are in no project yet" action={<Link to="/projects/new">Create a project</Link>}>
      Projects hold runs, datasets and reward functions. Create one, or ask an owner to invite you to theirs: their invitation shows here to accept.
    </EmptyState>
  );
}
