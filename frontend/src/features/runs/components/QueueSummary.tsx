import ui from "../../../components/ui.module.css";
import type { ProjectQueue } from "../api";
import { useProjectQueue } from "../hooks";

/** One line above the runs: how many jobs the project holds against its cap, and what
 * its queued runs wait for. Its key sits under the runs list's, so the project's live
 * run-status events refresh it with the list. */
export function QueueSummary({ slug }: { slug: string }) {
  const queue = useProjectQueue(slug);
  if (!queue.data) return null;
  return <QueueLine queue={queue.data} />;
}

export function QueueLine({ queue }: { queue: ProjectQueue }) {
  const { running_jobs: running, max_running_jobs: cap, queued } = queue;
  if (running === 0 && queued.length === 0) return null;
  const atCap = cap > 0 && running >= cap;
  const held = cap > 0 ? `${running} of ${cap} jobs running` : `${running} job${running === 1 ? "" : "s"} running`;
  const next = queued[0];
  return (
    <p className={ui.muted} role="status" aria-label="Queue" style={{ margin: "0 0 12px" }}>
      <strong>{held}</strong>
      {cap > 0 ? " (the most this project runs at once)" : null}
      {queued.length ? ` · ${queued.length} queued` : null}
      {next ? (
        <>
          {" · next, "}
          <span title={`#${next.position} in the cluster's queue`}>{next.name}</span>
          {next.waiting_for ? `, waits for ${next.waiting_for}` : null}
        </>
      ) : null}
      {atCap && queued.length ? " · other projects' runs can start meanwhile" : null}
    </p>
  );
}
