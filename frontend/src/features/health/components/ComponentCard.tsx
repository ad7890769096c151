import { useId, useState } from "react";

import type { ComponentHealth } from "../api";
import { componentInfo, formatLatency } from "../lib/format";
import styles from "./ComponentCard.module.css";
import { StatusPill } from "./StatusPill";

/** Details longer than this start folded to a few lines (error messages can be long). */
const FOLD_AFTER_CHARS = 140;

type ComponentCardProps = {
  name: string;
  health: ComponentHealth;
  stale?: boolean;
};

export function ComponentCard({ name, health, stale = false }: ComponentCardProps) {
  const info = componentInfo(name);
  const titleId = useId();
  const detailId = useId();
  const [expanded, setExpanded] = useState(false);
  const foldable = health.detail.length > FOLD_AFTER_CHARS;

  return (
    <article
      className={`${styles.card} ${styles[health.status]} ${stale ? styles.stale : ""}`}
      aria-labelledby={titleId}
      data-testid={`component-${name}`}
    >
      <header>
        <div className={styles.titleRow}>
          <h3 id={titleId} className={styles.name}>
            {info.label}
          </h3>
          <StatusPill status={health.status} />
        </div>
        <p className={styles.role}>{info.role}</p>
      </header>
      <dl className={styles.facts}>
        <div className={styles.fact}>
          <dt>Latency</dt>
          <dd className={styles.latency}>{formatLatency(health)}</dd>
        </div>
        <div className={styles.fact}>
          <dt>Detail</dt>
          <dd>
            <span
              id={detailId}
              className={`${styles.detail} ${foldable && !expanded ? styles.folded : ""}`}
              title={foldable && !expanded ? health.detail : undefined}
            >
              {health.detail || "—"}
            </span>
            {foldable ? (
              <button
                type="button"
                className={styles.more}
                aria-expanded={expanded}
                aria-controls={detailId}
                onClick={() => setExpanded((value) => !value)}
              >
                {expanded ? "Show less" : "Show all"}
              </button>
            ) : null}
          </dd>
        </div>
      </dl>
    </article>
  );
}
