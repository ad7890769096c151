import type { ReactNode } from "react";

import { AlertIcon, CheckCircleIcon, PlugOffIcon } from "../../../components/icons";
import type { Health } from "../api";
import { formatTime } from "../../../lib/time";
import { componentInfo, sortComponents } from "../lib/format";
import styles from "./HealthSummary.module.css";

type HealthSummaryProps = {
  health: Health;
  /** Set when the latest poll failed and `health` is the last good report. */
  lostContactSince?: number;
};

/** The one-line verdict above the component cards. */
export function HealthSummary({ health, lostContactSince }: HealthSummaryProps) {
  const components = sortComponents(health.components);
  const failing = components.filter(([, c]) => c.status === "error").map(([n]) => componentInfo(n).label);
  const disabled = components.filter(([, c]) => c.status === "disabled").map(([n]) => componentInfo(n).label);

  let tone: "ok" | "warn" | "error";
  let icon: ReactNode;
  let title: string;
  let detail: string;
  if (lostContactSince !== undefined) {
    tone = "error";
    icon = <PlugOffIcon size={22} />;
    title = "Lost contact with the studio API";
    detail = `Showing the last report, from ${formatTime(lostContactSince, "clock")}. Trying again every 5 seconds.`;
  } else if (health.status === "degraded") {
    tone = "warn";
    icon = <AlertIcon size={22} />;
    title = "Degraded service";
    detail = `Not answering: ${listNames(failing)}. Runs may not start or stream until it recovers.`;
  } else {
    tone = "ok";
    icon = <CheckCircleIcon size={22} />;
    title = "All systems operational";
    detail =
      disabled.length > 0
        ? `Every configured service is answering. Not configured: ${listNames(disabled)}.`
        : "Every service the studio depends on is answering.";
  }

  return (
    <section className={`${styles.summary} ${styles[tone]}`} role="status" aria-live="polite">
      <span className={styles.icon}>{icon}</span>
      <div>
        <h2 className={styles.title}>{title}</h2>
        <p className={styles.detail}>{detail}</p>
      </div>
    </section>
  );
}

function listNames(names: string[]): string {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}
