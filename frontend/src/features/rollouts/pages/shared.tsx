import { Link, useParams } from "react-router";

import ui from "../../../components/ui.module.css";
import { useRun } from "../../runs/hooks";
import review from "../components/review.module.css";
import styles from "./shared.module.css";

/** The project slug, run id and this run's rollouts URL from the route. */
export function useRunIds() {
  const { slug = "", runId = "0" } = useParams();
  const id = Number(runId);
  return { slug, runId: id, base: `/p/${slug}/runs/${id}/rollouts` };
}

type Props = { title: string; back?: string };

/** The page title with the run's name and status, and the way back. */
export function RunHeader({ title, back }: Props) {
  const { slug, runId } = useRunIds();
  const run = useRun(runId).data;
  return (
    <header className={review.header}>
      <h1 className={styles.title}>{title}</h1>
      <span className={ui.muted}>
        run {run ? `“${run.name}”` : runId} {run ? `· ${run.status}` : ""}
      </span>
      <nav className={styles.crumbs} aria-label="Back">
        <Link to={`/p/${slug}/runs/${runId}`}>Run page</Link>
        {back ? <Link to={back}>Back to the explorer</Link> : null}
      </nav>
    </header>
  );
}
