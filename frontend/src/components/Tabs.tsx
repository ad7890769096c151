import { useRef, type KeyboardEvent } from "react";

import styles from "./ui.module.css";

type TabsProps<K extends string> = {
  label: string;
  tabs: { key: K; label: string }[];
  current: K;
  onChange: (key: K) => void;
};

/** A tab list (the caller renders the panel); arrow keys move between tabs. */
export function Tabs<K extends string>({ label, tabs, current, onChange }: TabsProps<K>) {
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  function onKeyDown(event: KeyboardEvent, index: number) {
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
    if (!step) return;
    const next = (index + step + tabs.length) % tabs.length;
    const tab = tabs[next];
    if (!tab) return;
    onChange(tab.key);
    refs.current[next]?.focus();
  }
  return (
    <div role="tablist" aria-label={label} className={styles.tabs}>
      {tabs.map((tab, index) => (
        <button
          key={tab.key}
          ref={(el) => {
            refs.current[index] = el;
          }}
          type="button"
          role="tab"
          aria-selected={tab.key === current}
          tabIndex={tab.key === current ? 0 : -1}
          className={styles.tab}
          onClick={() => onChange(tab.key)}
          onKeyDown={(event) => onKeyDown(event, index)}
        >
          {tab.label}
        </button>
      ))}
    </div>
  );
}
