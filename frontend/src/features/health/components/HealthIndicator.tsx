import { NavLink } from "react-router";

import { useHealth } from "../hooks";
import styles from "./HealthIndicator.module.css";

/** Compact overall status for the top bar; links to the System status page. */
export function HealthIndicator() {
  const { data, isError, isPending } = useHealth();

  let tone: "ok" | "warn" | "error" | "pending";
  let label: string;
  if (isError) {
    tone = "error";
    label = "API unreachable";
  } else if (isPending) {
    tone = "pending";
    label = "Checking…";
  } else if (data?.status === "degraded") {
    tone = "warn";
    label = "Degraded";
  } else {
    tone = "ok";
    label = "All systems operational";
  }

  return (
    <NavLink to="/status" className={`${styles.indicator} ${styles[tone]}`} title="System status">
      <span className={styles.dot} aria-hidden="true" />
      <span className={styles.label}>{label}</span>
    </NavLink>
  );
}
