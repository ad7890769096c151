import { useState } from "react";
import { useNavigate } from "react-router";

import { Button } from "../../../components/Button";
import { ConfirmDialog } from "../../../components/ConfirmDialog";
import { useToast } from "../../../components/Toast";
import { formatBytes } from "../../../lib/units";
import { useCurrentProject } from "../../projects/hooks";
import { ACTIVE_STATUSES, type RunDetail } from "../api";
import { useDeleteRun, useRunAction } from "../hooks";

/** What deleting the run frees, in words: its measured files, or that they were not measured yet. */
export function freedWords(run: Pick<RunDetail, "storage_bytes">): string {
  if (run.storage_bytes === null) return "its files (not measured yet)";
  return run.storage_bytes > 0 ? `${formatBytes(run.storage_bytes)} of checkpoints and files` : "no files (it has none on this server)";
}

/**
 * Archive (hide from the runs list) and Delete (the run, its records and its files), for
 * members and owners. A live run is not deleted: the dialog offers to cancel it first (a
 * cancelling one offers nothing until it has stopped). The server may still refuse (a
 * model or an evaluation uses the run): its message is shown.
 */
export function RunStorageActions({ run, slug }: { run: RunDetail; slug: string }) {
  const navigate = useNavigate();
  const toast = useToast();
  const role = useCurrentProject().project?.role;
  const actions = useRunAction(run.id);
  const [confirming, setConfirming] = useState(false);
  const remove = useDeleteRun(run.id, slug, (freed) => {
    toast.show(`Deleted “${run.name}”: ${formatBytes(freed)} freed.`, "success");
    void navigate(`/p/${slug}/${run.kind === "evaluation" ? "evaluations" : "runs"}`);
  });
  if (role === undefined || role === "viewer") return null;
  const live = ACTIVE_STATUSES.includes(run.status);
  const what = run.kind === "evaluation" ? "evaluation" : "run";
  return (
    <>
      {live ? null : run.archived_at ? (
        <Button onClick={() => actions.unarchive.mutate()} disabled={actions.unarchive.isPending}>
          Unarchive
        </Button>
      ) : (
        <Button onClick={() => actions.archive.mutate()} disabled={actions.archive.isPending} title="Hide it from the runs list; it frees no storage">
          Archive
        </Button>
      )}
      {run.status === "cancelling" ? null : (
        <Button onClick={() => setConfirming(true)} disabled={remove.isPending}>
          Delete
        </Button>
      )}
      {live ? (
        <ConfirmDialog
          open={confirming}
          title={`${what === "run" ? "Run" : "Evaluation"} #${run.id} is ${run.status}`}
          confirmLabel={`Cancel ${what}`}
          cancelLabel="Keep it"
          busy={actions.cancel.isPending}
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            actions.cancel.mutate();
          }}
        >
          Only a {what} that has ended can be deleted. Cancel “{run.name}” first, then delete it once it has stopped.
        </ConfirmDialog>
      ) : (
        <ConfirmDialog
          open={confirming}
          title={`Delete ${what} #${run.id}?`}
          confirmLabel={`Delete ${what}`}
          cancelLabel="Keep it"
          danger
          busy={remove.isPending}
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            remove.mutate();
          }}
        >
          “{run.name}” goes with its metrics, samples, labels, logs and checkpoints, and frees {freedWords(run)}. This can't be undone.
          {run.archived_at ? null : " To only hide it from the runs list, archive it instead."}
        </ConfirmDialog>
      )}
    </>
  );
}
