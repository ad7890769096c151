import type { ReactNode } from "react";

import styles from "./EmptyState.module.css";

type EmptyStateProps = {
  icon: ReactNode;
  title: string;
  children: ReactNode;
  badge?: string;
  tone?: "neutral" | "error";
  action?: ReactNode;
};

/** A centred card for "nothing here yet", "coming soon" and failure states. */
export function EmptyState({ icon, title, children, badge, tone = "neutral", action }: EmptyStateProps) {
  return (
    <section className={`${styles.empty} ${tone === "error" ? styles.error : ""}`} aria-label={title}>
      <div className={styles.icon}>{icon}</div>
      {badge ? <span className={styles.badge}>{badge}</span> : null}
      <h2 className={styles.title}>{title}</h2>
      <div className={styles.body}>{children}</div>
      {action ? <div className={styles.action}>{action}</div> : null}
    </section>
  );
}
