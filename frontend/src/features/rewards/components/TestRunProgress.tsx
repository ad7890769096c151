import type { TestRun } from "../api";
import styles from "./TestPanel.module.css";
import { ProgressBar } from "../../../components/ProgressBar";

const PHASE_WORDS: Record<TestRun["progress"]["phase"], string> = {
  queued: "Waiting for a worker",
  reading: "Reading dataset rows",
  sampling: "Sampling completions",
  scoring: "Scoring in the sandbox",
  done: "Done",
};

/** The live bar of a queued or running test-run: done / total of its current phase. */
export function TestRunProgress({ run }: { run: TestRun }) {
  const { phase, done, total } = run.progress;
  const percent = total > 0 ? Math.round((100 * done) / total) : phase === "done" ? 100 : 0;
  const counted = phase === "sampling" ? "completions" : "rows";
  return (
    <div className={styles.progress}>
      <div className={styles.progressText}>
        <span>{PHASE_WORDS[phase]}</span>
        <span>{total > 0 ? `${done} / ${total} ${counted}` : ""}</span>
      </div>
      <ProgressBar label={`Test-run ${run.id}: ${PHASE_WORDS[phase]}`} percent={percent} />
    </div>
  );
}
