import { useMemo } from "react";

import type { Sample } from "../api";
import { diffStats, wordDiff } from "../lib/wordDiff";
import styles from "../rollouts.module.css";

/** A word-level diff of two responses: removed words struck out, added ones highlighted. */
export function DiffView({ before, after }: { before: Sample; after: Sample }) {
  const parts = useMemo(() => wordDiff(before.response, after.response), [before, after]);
  const stats = diffStats(parts);
  return (
    <section className={`${styles.card} ${styles.section}`} aria-label="Word diff">
      <h2 className={styles.sectionTitle}>
        Diff: sample {before.id} (run {before.run}, step {before.step}) → sample {after.id} (run{" "}
        {after.run}, step {after.step})
      </h2>
      <span className={styles.muted} data-testid="diff-stats">
        {stats.added} words added, {stats.removed} removed
      </span>
      <pre className={styles.text} data-testid="diff">
        {parts.map((part, i) =>
          part.kind === "same" ? (
            <span key={i}>{part.text}</span>
          ) : part.kind === "added" ? (
            <ins key={i} className={styles.added}>
              {part.text}
            </ins>
          ) : (
            <del key={i} className={styles.removed}>
              {part.text}
            </del>
          ),
        )}
      </pre>
    </section>
  );
}
