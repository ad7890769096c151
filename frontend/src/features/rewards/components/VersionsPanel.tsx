/** The versions of a function, newest first, and a side-by-side diff of any two. */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";

import { getVersion, rewardKeys, type RewardVersionSummary } from "../api";
import { LazyDiffView } from "./LazyEditors";
import styles from "./TestPanel.module.css";

type VersionsPanelProps = {
  functionId: number;
  versions: readonly RewardVersionSummary[];
  onOpen: (number: number) => void;
};

function useVersionCode(functionId: number, number: number | null) {
  return useQuery({
    queryKey: rewardKeys.version(functionId, number ?? 0),
    queryFn: ({ signal }) => getVersion(functionId, number as number, signal),
    enabled: number !== null,
    staleTime: Infinity, // versions never change
  });
}

export function VersionsPanel({ functionId, versions, onOpen }: VersionsPanelProps) {
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const [showDiff, setShowDiff] = useState(false);
  const newest = versions[0]?.number ?? null;
  const toNumber = to ?? newest;
  const fromNumber = from ?? (toNumber !== null && toNumber > 1 ? toNumber - 1 : null);
  const before = useVersionCode(functionId, showDiff ? fromNumber : null);
  const after = useVersionCode(functionId, showDiff ? toNumber : null);

  if (versions.length === 0) {
    return <p className={styles.muted}>No versions yet: save the code to make version 1.</p>;
  }
  return (
    <section className={styles.panel} aria-label="Versions">
      <h2 className={styles.heading}>Versions</h2>
      <ol className={styles.versionList}>
        {versions.map((v) => (
          <li key={v.id} className={styles.versionItem}>
            <strong>v{v.number}</strong>
            <span className={styles.versionMessage}>
              {v.message || <span className={styles.muted}>no message</span>}
            </span>
            <span className={styles.muted}>
              {v.author} · {new Date(v.created_at).toLocaleString()}
            </span>
            <button type="button" onClick={() => onOpen(v.number)}>
              Open
            </button>
          </li>
        ))}
      </ol>
      {versions.length > 1 ? (
        <div className={styles.row}>
          <label className={styles.field}>
            Diff from
            <select aria-label="Diff from" value={fromNumber ?? ""} onChange={(e) => setFrom(Number(e.target.value))}>
              {versions.map((v) => (
                <option key={v.id} value={v.number}>
                  v{v.number}
                </option>
              ))}
            </select>
          </label>
          <label className={styles.field}>
            to
            <select aria-label="to" value={toNumber ?? ""} onChange={(e) => setTo(Number(e.target.value))}>
              {versions.map((v) => (
                <option key={v.id} value={v.number}>
                  v{v.number}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={() => setShowDiff(!showDiff)} aria-expanded={showDiff}>
            {showDiff ? "Hide diff" : "Show diff"}
          </button>
        </div>
      ) : null}
      {showDiff && before.data && after.data ? (
        <LazyDiffView before={before.data.code} after={after.data.code} />
      ) : null}
      {showDiff && (before.isError || after.isError) ? (
        <p className={styles.errorBox} role="alert">
          {(before.error ?? after.error)?.message}
        </p>
      ) : null}
    </section>
  );
}
