/** A reward's extra info: the strings, nulls, lists and dicts of its dict return (verl's
 * reward_extra_info), shown as `key: value` pairs. Numbers and booleans are components. */
import styles from "./ui.module.css";

export type Extra = Record<string, unknown>;

/** `[key, text]` per entry, in the order the reward returned them; strings as written,
 * anything else as compact JSON. */
export function extraEntries(extra: Extra | null | undefined): [string, string][] {
  return Object.entries(extra ?? {}).map(([key, value]) => [
    key,
    typeof value === "string" ? value : JSON.stringify(value),
  ]);
}

export function ExtraInfo({ extra, label = "Extra info" }: { extra: Extra | null | undefined; label?: string }) {
  const entries = extraEntries(extra);
  if (entries.length === 0) return null;
  return (
    <dl className={styles.extraInfo} aria-label={label}>
      {entries.map(([key, text]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd className={styles.mono}>{text}</dd>
        </div>
      ))}
    </dl>
  );
}
