/** The versions of a function, newest first, and a side-by-side diff of any two. */
import { useState } from "react";

import { Notice } from "../../../components/Notice";
import { SelectField } from "../../../components/Field";
import { Card, FormRow } from "../../../components/Layout";
import { Time } from "../../../components/Time";

import type { RewardVersionSummary } from "../api";
import { useRewardVersion } from "../hooks";
import { LazyDiffView } from "./LazyEditors";
import ui from "../../../components/ui.module.css";
import styles from "./TestPanel.module.css";

type VersionsPanelProps = {
  functionId: number;
  versions: readonly RewardVersionSummary[];
  onOpen: (number: number) => void;
};

export function VersionsPanel({ functionId, versions, onOpen }: VersionsPanelProps) {
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const [showDiff, setShowDiff] = useState(false);
  const newest = versions[0]?.number ?? null;
  const toNumber = to ?? newest;
  const fromNumber = from ?? (toNumber !== null && toNumber > 1 ? toNumber - 1 : null);
  const before = useRewardVersion(functionId, showDiff ? fromNumber : null);
  const after = useRewardVersion(functionId, showDiff ? toNumber : null);

  if (versions.length === 0) {
    return <p className={ui.muted}>No versions yet: save the code to make version 1.</p>;
  }
  return (
    <Card label="Versions" title="Versions">
      <ol className={styles.versionList}>
        {versions.map((v) => (
          <li key={v.id} className={styles.versionItem}>
            <strong>v{v.number}</strong>
            <span className={styles.versionMessage}>
              {v.message || <span className={ui.muted}>no message</span>}
            </span>
            <span className={ui.muted}>
              {v.author} · <Time value={v.created_at} />
            </span>
            <button type="button" onClick={() => onOpen(v.number)}>
              Open
            </button>
          </li>
        ))}
      </ol>
      {versions.length > 1 ? (
        <FormRow>
          <VersionSelect label="Diff from" versions={versions} value={fromNumber} onChange={setFrom} />
          <VersionSelect label="to" versions={versions} value={toNumber} onChange={setTo} />
          <button type="button" onClick={() => setShowDiff(!showDiff)} aria-expanded={showDiff}>
            {showDiff ? "Hide diff" : "Show diff"}
          </button>
        </FormRow>
      ) : null}
      {showDiff && before.data && after.data ? (
        <LazyDiffView before={before.data.code} after={after.data.code} />
      ) : null}
      {showDiff && (before.isError || after.isError) ? (
        <Notice tone="error">{(before.error ?? after.error)?.message}</Notice>
      ) : null}
    </Card>
  );
}

function VersionSelect({ label, versions, value, onChange }: { label: string; versions: readonly RewardVersionSummary[]; value: number | null; onChange: (n: number) => void }) {
  return (
    <SelectField label={label} value={value ?? ""} onChange={(v) => onChange(Number(v))}>
      {versions.map((v) => (
        <option key={v.id} value={v.number}>
          v{v.number}
        </option>
      ))}
    </SelectField>
  );
}
