import { useEffect, useState } from "react";

import { Button } from "../../../components/Button";
import { SelectField, TextField } from "../../../components/Field";
import ui from "../../../components/ui.module.css";
import { useLocalCopy } from "../../../lib/useLocalCopy";
import { type ExplorerFilters, NO_FILTERS, type Signal } from "../lib/explorerQuery";
import styles from "./FilterBar.module.css";
import review from "./review.module.css";

/** An evaluation's model: its responses are the samples at its step. */
export type ModelChoice = { step: number; label: string };

type Props = {
  filters: ExplorerFilters;
  steps: number[];
  live: boolean;
  onChange: (filters: ExplorerFilters) => void;
  /** An evaluation's models: a "Model" filter by label (the step of its responses). */
  models?: ModelChoice[];
};

/** A text box that applies its value on Enter or when it loses focus (not per keystroke). */
function DraftInput(props: {
  label: string;
  value: string;
  onCommit: (value: string) => void;
  type?: "text" | "number" | "search";
  narrow?: boolean;
  placeholder?: string;
}) {
  const [draft, setDraft] = useState(props.value);
  useEffect(() => setDraft(props.value), [props.value]);
  const commit = () => {
    if (draft !== props.value) props.onCommit(draft);
  };
  return (
    <TextField
      label={props.label}
      type={props.type ?? "text"}
      step="any"
      className={props.narrow ? styles.narrowField : undefined}
      value={draft}
      placeholder={props.placeholder}
      onChange={setDraft}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === "Enter") commit();
      }}
    />
  );
}

const num = (text: string): number | null => (text.trim() === "" || !Number.isFinite(Number(text)) ? null : Number(text));
const show = (value: number | null): string => (value === null ? "" : String(value));

function nearestIndex(steps: number[], step: number | null, fallback: number): number {
  if (step === null || steps.length === 0) return fallback;
  let best = 0;
  steps.forEach((s, i) => {
    if (Math.abs(s - step) < Math.abs(steps[best]! - step)) best = i;
  });
  return best;
}

/** The step range as two sliders over the recorded steps, plus "follow latest". */
function StepSlider({ filters, steps, live, onChange }: Props) {
  if (steps.length === 0) return <span className={ui.muted}>No samples recorded yet.</span>;
  const lastIndex = steps.length - 1;
  const lo = nearestIndex(steps, filters.stepMin, 0);
  const hi = nearestIndex(steps, filters.stepMax, lastIndex);
  const set = (from: number, to: number) =>
    onChange({ ...filters, stepMin: steps[from]!, stepMax: steps[to]!, follow: false });
  return (
    <div className={styles.slider}>
      <label htmlFor="step-from" className={ui.muted}>
        from step <strong>{steps[lo]}</strong>
      </label>
      <input
        id="step-from"
        type="range"
        min={0}
        max={lastIndex}
        value={lo}
        aria-label="First step"
        aria-valuetext={`step ${steps[lo]}`}
        onChange={(e) => {
          const from = Number(e.target.value);
          set(from, Math.max(from, hi));
        }}
      />
      <label htmlFor="step-to" className={ui.muted}>
        to step <strong>{steps[hi]}</strong>
      </label>
      <input
        id="step-to"
        type="range"
        min={0}
        max={lastIndex}
        value={hi}
        aria-label="Last step"
        aria-valuetext={`step ${steps[hi]}`}
        onChange={(e) => {
          const to = Number(e.target.value);
          set(Math.min(lo, to), to);
        }}
      />
      {live ? (
        <label className={review.check} style={{ gridColumn: "1 / span 2" }}>
          <input
            type="checkbox"
            checked={filters.follow}
            onChange={(e) => onChange({ ...filters, follow: e.target.checked })}
          />
          Follow the latest step
        </label>
      ) : null}
    </div>
  );
}

/** An evaluation's responses by model: one model is its step, as a one-step range. */
function ModelFilter({ models, filters, onChange }: { models: ModelChoice[]; filters: ExplorerFilters; onChange: (f: ExplorerFilters) => void }) {
  const single = filters.stepMin !== null && filters.stepMin === filters.stepMax ? filters.stepMin : null;
  const value = models.some((m) => m.step === single) ? String(single) : "";
  return (
    <SelectField
      label="Model"
      value={value}
      onChange={(v) => {
        const step = v === "" ? null : Number(v);
        onChange({ ...filters, stepMin: step, stepMax: step, follow: false });
      }}
    >
      <option value="">every model</option>
      {models.map((m) => (
        <option key={m.step} value={m.step}>
          {m.label}
        </option>
      ))}
    </SelectField>
  );
}

/**
 * Every filter of the explorer; each change is written to the URL by the page, and shows
 * here at once (a local copy), before the URL and the list have caught up.
 */
/** How many of the filters besides the steps are set (the narrow layout's toggle says it). */
function setCount(filters: ExplorerFilters): number {
  const set = [filters.split, filters.scoreMin !== null, filters.scoreMax !== null, filters.dataSource, filters.rewardVersion !== null, filters.label, filters.signal, filters.errorsOnly, filters.episodesOnly, filters.q, filters.groups.length];
  return set.filter(Boolean).length;
}

export function FilterBar(props: Props) {
  const [filters, onChange] = useLocalCopy(props.filters, props.onChange);
  // On a phone only the steps show until asked: the other filters would fill the screen.
  const [expanded, setExpanded] = useState(false);
  const count = setCount(filters);
  return (
    <section className={`${ui.card} ${review.filters}`} aria-label="Filters">
      <StepSlider {...props} filters={filters} onChange={onChange} />
      <button type="button" className={review.filtersToggle} aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
        {expanded ? "Fewer filters" : `More filters${count ? ` (${count} set)` : ""}`}
      </button>
      <div className={review.moreFilters} data-expanded={expanded}>
        {props.models?.length ? <ModelFilter models={props.models} filters={filters} onChange={onChange} /> : null}
        <SelectField label="Split" value={filters.split} onChange={(split) => onChange({ ...filters, split })}>
          <option value="">any</option>
          <option value="train">train</option>
          <option value="val">val</option>
          <option value="eval">eval</option>
        </SelectField>
        <DraftInput
          label="Score from"
          type="number"
          narrow
          value={show(filters.scoreMin)}
          onCommit={(v) => onChange({ ...filters, scoreMin: num(v) })}
        />
        <DraftInput
          label="Score to"
          type="number"
          narrow
          value={show(filters.scoreMax)}
          onCommit={(v) => onChange({ ...filters, scoreMax: num(v) })}
        />
        <DraftInput
          label="Data source"
          value={filters.dataSource}
          onCommit={(dataSource) => onChange({ ...filters, dataSource: dataSource.trim() })}
        />
        <DraftInput
          label="Reward version"
          type="number"
          narrow
          placeholder="v…"
          value={show(filters.rewardVersion)}
          onCommit={(v) => onChange({ ...filters, rewardVersion: num(v) })}
        />
        <DraftInput
          label="Label"
          value={filters.label}
          onCommit={(label) => onChange({ ...filters, label: label.trim() })}
        />
        <SelectField
          label="Groups"
          value={filters.signal ?? ""}
          onChange={(v) => onChange({ ...filters, signal: (v || null) as Signal | null })}
        >
          <option value="">all groups</option>
          <option value="learning">only with a learning signal</option>
          <option value="zero">only zero-spread</option>
        </SelectField>
        <label className={review.check}>
          <input
            type="checkbox"
            checked={filters.errorsOnly}
            onChange={(e) => onChange({ ...filters, errorsOnly: e.target.checked })}
          />
          Reward errors only
        </label>
        <label className={review.check}>
          <input
            type="checkbox"
            checked={filters.episodesOnly}
            onChange={(e) => onChange({ ...filters, episodesOnly: e.target.checked })}
          />
          Multi-turn episodes only
        </label>
        <DraftInput
          label="Search prompt and response"
          type="search"
          value={filters.q}
          placeholder='words, "a phrase", -word'
          onCommit={(q) => onChange({ ...filters, q })}
        />
        {filters.groups.length ? (
          <span className={ui.pill}>
            {filters.groups.length} named group{filters.groups.length > 1 ? "s" : ""}
          </span>
        ) : null}
        <Button onClick={() => onChange(NO_FILTERS)}>Clear filters</Button>
      </div>
    </section>
  );
}
