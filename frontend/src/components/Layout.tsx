/** The page and card layout: a page is a column of cards (and headers, tables, notices). */
import type { CSSProperties, FormEventHandler, ReactNode } from "react";

import styles from "./Layout.module.css";

export const layoutClass = { page: styles.page, columns: styles.columns, grow: styles.grow };

export function Page({ children, className }: { children: ReactNode; className?: string }) {
  return <div className={className ? `${styles.page} ${className}` : styles.page}>{children}</div>;
}

type CardProps = {
  /** The card's accessible name (a region, or a form when `onSubmit` is given). */
  label?: string;
  /** A heading shown at the card's top. */
  title?: ReactNode;
  children: ReactNode;
  onSubmit?: FormEventHandler<HTMLFormElement>;
  className?: string;
  testId?: string;
};

/** A bordered card: a labelled region, or a form when it submits. */
export function Card({ label, title, children, onSubmit, className, testId }: CardProps) {
  const classes = className ? `${styles.card} ${className}` : styles.card;
  const heading = title ? <h2 className={styles.heading}>{title}</h2> : null;
  if (onSubmit) {
    return (
      <form className={classes} onSubmit={onSubmit} aria-label={label} data-testid={testId}>
        {heading}
        {children}
      </form>
    );
  }
  return (
    <section className={classes} aria-label={label} data-testid={testId}>
      {heading}
      {children}
    </section>
  );
}

/** Two columns side by side (one on narrow screens); `first` widens the first one ("1.15fr"). */
export function Columns({ children, first }: { children: ReactNode; first?: string }) {
  return (
    <div className={styles.columns} style={first ? ({ "--first": first } as CSSProperties) : undefined}>
      {children}
    </div>
  );
}

/** Fields and buttons side by side, wrapping on narrow screens. */
export function FormRow({ children }: { children: ReactNode }) {
  return <div className={styles.formRow}>{children}</div>;
}
