import { useMemo } from "react";

import ui from "../../../components/ui.module.css";
import type { Sample } from "../../samples/api";
import { diffStats, wordDiff } from "../lib/wordDiff";
import styles from "./DiffView.module.css";
import review from "./review.module.css";

/** A word-level diff of two responses: removed words struck out, added ones highlighted. */
export function DiffView({ before, after }: { before: Sample; after: Sample }) {
  const parts = useMemo(() => wordDiff(before.response, after.response), [before, after]);
  const stats = diffStats(parts);
  return (
    <section className={`${ui.card} ${review.section}`} aria-label="Word diff">
      <h2 className={review.sectionTitle}>
        Diff: sample {before.id} (run {before.run}, step {before.step}) → sample {after.id} (run{" "}
        {after.run}, step {after.step})
      </h2>
      <span className={ui.muted} data-testid="diff-stats">
        {stats.added} words added, {stats.removed} removed
      </span>
      <pre className={review.text} data-testid="diff">
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
