import type { ComponentHealth } from "../api";

type ComponentInfo = { label: string; role: string };

/** What each probed service is, in the words the product uses. */
const KNOWN_COMPONENTS: Record<string, ComponentInfo> = {
  database: { label: "Database", role: "PostgreSQL: runs, metrics, samples" },
  broker: { label: "Broker", role: "Redis: task queue and live updates" },
  ray: { label: "Ray cluster", role: "Where training jobs run" },
};

const DISPLAY_ORDER = Object.keys(KNOWN_COMPONENTS);

export function componentInfo(name: string): ComponentInfo {
  const known = KNOWN_COMPONENTS[name];
  if (known) return known;
  const label = name.replace(/[_-]+/g, " ");
  return { label: label.charAt(0).toUpperCase() + label.slice(1), role: "Service the studio depends on" };
}

/** Known components first in a fixed order, then any others alphabetically. */
export function sortComponents(
  components: Record<string, ComponentHealth>,
): [string, ComponentHealth][] {
  const rank = (name: string) => {
    const index = DISPLAY_ORDER.indexOf(name);
    return index === -1 ? DISPLAY_ORDER.length : index;
  };
  return Object.entries(components).sort(
    ([a], [b]) => rank(a) - rank(b) || a.localeCompare(b),
  );
}

export function formatLatency(component: ComponentHealth): string {
  if (component.status === "disabled") return "—";
  const ms = component.latency_ms;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(1)} ms`;
}
