import { useState } from "react";

import { errorMessage } from "../../../api/client";
import { Button } from "../../../components/Button";
import { inputClass } from "../../../components/Field";
import ui from "../../../components/ui.module.css";
import { isFinished, type TestRunRequest } from "../../rewards/api";
import { useRewardFunctions, useRewardVersions, useStartTestRun, useTestRun } from "../../rewards/hooks";
import { errorSummary } from "../../rewards/lib/results";
import styles from "../playground.module.css";

/** The reward test-run that scores one pasted reply (the sandbox, as any test-run). */
function scoreRequest(version: number, reply: string, expected: string): TestRunRequest {
  return {
    reward_version: version,
    source: "completions",
    completions: [{ solution_str: reply, ground_truth: expected, data_source: "playground", extra_info: {} }],
    rows: 1,
    offset: 0,
    solution_template: "{ground_truth}",
    timeout_s: 2,
    samples_per_prompt: 1,
    temperature: 1,
    top_p: 1,
    top_k: 0,
    max_new_tokens: 64,
    seed: 0,
  };
}

/** "Score": a finished reply scored by a version of a reward function of the project (its
 * latest unless another is picked), against the answer the user expected. */
export function ScoreReply({ slug, reply }: { slug: string; reply: string }) {
  const [open, setOpen] = useState(false);
  const functions = useRewardFunctions(open ? slug : "");
  const [picked, setPicked] = useState("");
  const [expected, setExpected] = useState("");
  const usable = (functions.data ?? []).filter((f) => f.latest_version);
  const chosen = usable.find((f) => String(f.id) === picked) ?? usable[0];
  const versions = useRewardVersions(open && chosen ? chosen.id : null);
  const [pickedVersion, setPickedVersion] = useState<number | null>(null);
  const version = versions.data?.find((v) => v.id === pickedVersion)?.id ?? chosen?.latest_version?.id ?? null;
  const start = useStartTestRun(chosen?.id ?? 0);
  const run = useTestRun(start.data?.id ?? null);
  if (!open) {
    return (
      <button type="button" className={styles.linkButton} onClick={() => setOpen(true)}>
        Score with a reward
      </button>
    );
  }
  const result = run.data && isFinished(run.data) ? run.data : null;
  const row = result?.result?.rows[0];
  return (
    <form
      className={styles.score}
      aria-label="Score this reply"
      onSubmit={(event) => {
        event.preventDefault();
        if (version !== null) start.mutate(scoreRequest(version, reply, expected));
      }}
    >
      {functions.data && usable.length === 0 ? <span className={ui.muted}>The project has no reward function yet.</span> : null}
      <select
        className={inputClass}
        aria-label="Reward function"
        value={chosen ? String(chosen.id) : ""}
        onChange={(e) => {
          setPicked(e.target.value);
          setPickedVersion(null); // the new function's latest
        }}
      >
        {usable.map((f) => (
          <option key={f.id} value={f.id}>
            {f.name}
          </option>
        ))}
      </select>
      <select className={inputClass} aria-label="Reward version" value={version ?? ""} onChange={(e) => setPickedVersion(Number(e.target.value))}>
        {(versions.data ?? (chosen?.latest_version ? [chosen.latest_version] : [])).map((v) => (
          <option key={v.id} value={v.id}>
            v{v.number}
          </option>
        ))}
      </select>
      <input className={inputClass} aria-label="Expected answer" placeholder="Expected answer" value={expected} onChange={(e) => setExpected(e.target.value)} />
      <Button type="submit" disabled={version === null || start.isPending || (start.isSuccess && !result)}>
        Score
      </Button>
      {start.isSuccess && !result ? <span className={ui.muted}>Scoring…</span> : null}
      {row ? (
        <span className={`${ui.pill} ${row.error ? ui.error : ui.ok}`} data-testid="reply-score">
          {row.error ? `error: ${errorSummary(row.error)}` : `score ${row.score.toFixed(3)}`}
        </span>
      ) : null}
      {result && !row ? <span className={`${ui.pill} ${ui.error}`}>{result.error || "not scored"}</span> : null}
      {start.error ? <span className={`${ui.pill} ${ui.error}`}>{errorMessage(start.error)}</span> : null}
    </form>
  );
}
