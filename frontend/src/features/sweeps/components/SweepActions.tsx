import { useState } from "react";
import { useNavigate } from "react-router";

import { Button, ButtonLink } from "../../../components/Button";
import { ConfirmDialog } from "../../../components/ConfirmDialog";
import { inputClass } from "../../../components/Field";
import { useSweepActions } from "../hooks";
import styles from "../sweeps.module.css";
import { topRunIds } from "../lib/trials";
import type { SweepDetail } from "../lib/types";

/** The compare page takes two to eight runs. */
const MIN_COMPARE = 2;
const MAX_COMPARE = 8;

/** Pause, resume, stop, more trials, and the best trials on the compare page. */
export function SweepActions({ sweep, slug }: { sweep: SweepDetail; slug: string }) {
  const { act, addTrials, remove } = useSweepActions(sweep.id);
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const live = sweep.trials.some((t) => t.state === "running");
  const [more, setMore] = useState("4");
  const scored = sweep.trials.filter((t) => t.value !== null).length;
  const [top, setTop] = useState(String(Math.min(3, Math.max(MIN_COMPARE, scored))));
  const busy = act.isPending || addTrials.isPending || remove.isPending;
  const ended = sweep.status === "stopped" || sweep.status === "finished";
  const compareIds = topRunIds(sweep.trials, sweep.direction, Number(top));
  const moreCount = Number(more);
  return (
    <div className={styles.actions}>
      {sweep.status === "running" ? (
        <Button onClick={() => act.mutate("pause")} disabled={busy}>
          Pause
        </Button>
      ) : null}
      {sweep.status === "paused" ? (
        <Button onClick={() => act.mutate("resume")} disabled={busy}>
          Resume
        </Button>
      ) : null}
      {!ended ? (
        <Button onClick={() => setConfirming(true)} disabled={busy}>
          Stop
        </Button>
      ) : null}
      <ConfirmDialog
        open={confirming}
        title={`Stop sweep “${sweep.name}”?`}
        confirmLabel="Stop sweep"
        cancelLabel="Keep it going"
        danger
        busy={act.isPending}
        onCancel={() => setConfirming(false)}
        onConfirm={() => {
          setConfirming(false);
          act.mutate("stop");
        }}
      >
        No new trial starts and its running trials are cancelled; finished trials and their runs stay.
      </ConfirmDialog>
      {/* The server deletes a sweep only once no trial runs (409 otherwise): offered then. */}
      {!live ? (
        <Button onClick={() => setDeleting(true)} disabled={busy}>
          Delete
        </Button>
      ) : null}
      <ConfirmDialog
        open={deleting}
        title={`Delete sweep “${sweep.name}”?`}
        confirmLabel="Delete sweep"
        cancelLabel="Keep it"
        danger
        busy={remove.isPending}
        onCancel={() => setDeleting(false)}
        onConfirm={() => {
          setDeleting(false);
          remove.mutate(undefined, { onSuccess: () => void navigate(`/p/${slug}/sweeps`) });
        }}
      >
        Its {sweep.trials.length} trial run{sweep.trials.length === 1 ? "" : "s"} and their files (checkpoints, samples, logs) are deleted too. This cannot be undone.
      </ConfirmDialog>
      <form
        className={styles.inlineForm}
        aria-label="Add trials"
        onSubmit={(event) => {
          event.preventDefault();
          if (Number.isInteger(moreCount) && moreCount >= 1) addTrials.mutate(moreCount);
        }}
      >
        <input className={`${inputClass} ${styles.small}`} type="number" min={1} max={1000} value={more} onChange={(e) => setMore(e.target.value)} aria-label="Trials to add" />
        <Button type="submit" disabled={busy || !(Number.isInteger(moreCount) && moreCount >= 1)}>
          Add trials
        </Button>
      </form>
      <span className={styles.inlineForm}>
        <select className={inputClass} value={top} onChange={(e) => setTop(e.target.value)} aria-label="How many of the best trials to compare">
          {Array.from({ length: MAX_COMPARE - MIN_COMPARE + 1 }, (_, i) => i + MIN_COMPARE).map((n) => (
            <option key={n} value={n}>
              top {n}
            </option>
          ))}
        </select>
        {compareIds.length >= MIN_COMPARE ? (
          <ButtonLink to={`/p/${slug}/compare?runs=${compareIds.join(",")}`}>Compare</ButtonLink>
        ) : (
          <Button disabled title="Two trials need a value first">
            Compare
          </Button>
        )}
      </span>
    </div>
  );
}
