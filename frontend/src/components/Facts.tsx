import type { CSSProperties, ReactNode } from "react";

import styles from "./Facts.module.css";

export type Fact = { label: string; value: ReactNode; testId?: string };

/** Labelled values as tiles (a version's stats, a test-run's summary, a model's facts). */
export function Facts({ facts, label, tileWidth = 120 }: { facts: Fact[]; label?: string; tileWidth?: number }) {
  return (
    <dl className={styles.facts} aria-label={label} style={{ "--tile": `${tileWidth}px` } as CSSProperties}>
      {facts.map((fact) => (
        <div key={fact.label}>
          <dt>{fact.label}</dt>
          <dd data-testid={fact.testId}>{fact.value}</dd>
        </div>
      ))}
    </dl>
  );
}
