import { useVirtualizer } from "@tanstack/react-virtual";
import { type KeyboardEvent, useEffect, useRef } from "react";

import ui from "../../../components/ui.module.css";
import { countOf } from "../../../lib/plural";
import type { Sample } from "../../samples/api";
import review from "./review.module.css";
import styles from "./SampleList.module.css";
import { componentEntries, FinishPill, formatScore } from "./SampleText";

export const ROW_HEIGHT = 58;

type Props = {
  samples: Sample[];
  selectedId: number | null;
  hasMore: boolean;
  loading: boolean;
  component: string;
  onSelect: (sample: Sample) => void;
  onLoadMore: () => void;
  /** Keys pressed in the list (the explorer's shortcuts listen on the document instead). */
  onKeyDown?: (event: KeyboardEvent<HTMLDivElement>) => void;
};

/**
 * Samples in a virtualised list: only the rows in view (plus a few) are in the
 * DOM, so tens of thousands scroll smoothly. Nearing the end loads the next page.
 */
export function SampleList(props: Props) {
  const { samples, selectedId, hasMore, loading, component, onSelect, onLoadMore, onKeyDown } = props;
  const parent = useRef<HTMLDivElement>(null);
  const count = samples.length + (hasMore ? 1 : 0);
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => parent.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
  });
  const items = virtualizer.getVirtualItems();
  const last = items[items.length - 1];

  useEffect(() => {
    if (last && last.index >= samples.length - 20 && hasMore && !loading) onLoadMore();
  }, [last, samples.length, hasMore, loading, onLoadMore]);

  const selectedIndex = samples.findIndex((s) => s.id === selectedId);
  useEffect(() => {
    if (selectedIndex >= 0) virtualizer.scrollToIndex(selectedIndex, { align: "auto" });
  }, [selectedIndex, virtualizer]);

  return (
    <div
      ref={parent}
      className={styles.list}
      tabIndex={0}
      role="listbox"
      aria-label="Samples"
      aria-activedescendant={selectedId !== null ? `sample-row-${selectedId}` : undefined}
      onKeyDown={onKeyDown}
      data-testid="sample-list"
    >
      <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
        {items.map((item) => {
          const sample = samples[item.index];
          if (!sample) {
            return (
              <div key="more" className={styles.row} style={{ top: item.start, height: item.size }}>
                <span className={ui.muted}>Loading more samples…</span>
              </div>
            );
          }
          const value = component
            ? componentEntries(sample.components).find(([key]) => key === component)
            : undefined;
          return (
            <div
              key={sample.id}
              id={`sample-row-${sample.id}`}
              role="option"
              aria-selected={sample.id === selectedId}
              data-sample-id={sample.id}
              data-score={sample.score ?? ""}
              data-step={sample.step}
              className={`${styles.row} ${sample.id === selectedId ? styles.selected : ""}`}
              style={{ top: item.start, height: item.size }}
              onClick={() => onSelect(sample)}
            >
              <div className={review.rowMeta}>
                <span className={review.score}>{formatScore(sample.score)}</span>
                {value ? (
                  <span className={ui.pill}>
                    {component} {formatScore(value[1])}
                  </span>
                ) : null}
                <span>step {sample.step}</span>
                <span>group {sample.group_id}</span>
                <span>{sample.response_length} tok</span>
                {sample.num_turns ? <span className={ui.pill}>{countOf(sample.num_turns, "turn")}</span> : null}
                <FinishPill reason={sample.finish_reason} />
                {sample.error ? <span className={`${ui.pill} ${ui.error}`}>error</span> : null}
                {sample.labels.map((l) => (
                  <span key={l.id} className={`${ui.pill} ${ui.ok}`}>
                    {l.label}
                  </span>
                ))}
              </div>
              <div className={review.snippet}>{sample.response.slice(0, 200) || "(empty response)"}</div>
            </div>
          );
        })}
      </div>
    </div>
  );
}
