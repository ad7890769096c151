import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";

import { Field, inputClass } from "../../../components/Field";
import { Loading } from "../../../components/Spinner";
import ui from "../../../components/ui.module.css";
import { getRewardVersion, listDatasets, listDatasetVersions, listRewardFunctions, listRewardVersions, previewDataset, runKeys } from "../api";

type PickerProps = { slug: string; value: number | null; onChange: (versionId: number | null) => void; errors: string[] };

/** Dataset version picker with a preview of its first rows. */
export function DatasetVersionPicker({ slug, value, onChange, errors }: PickerProps) {
  const [datasetId, setDatasetId] = useState<number | null>(null);
  const datasets = useQuery({ queryKey: runKeys.datasets(slug), queryFn: ({ signal }) => listDatasets(slug, signal) });
  // A preselected version (?dataset_version=ID): open its dataset when it is a latest one.
  const owner = datasets.data?.find((d) => d.latest_version?.id === value)?.id ?? null;
  useEffect(() => {
    if (datasetId === null && owner !== null) setDatasetId(owner);
  }, [datasetId, owner]);
  const versions = useQuery({
    queryKey: runKeys.datasetVersions(datasetId ?? 0),
    queryFn: ({ signal }) => listDatasetVersions(datasetId ?? 0, signal),
    enabled: datasetId !== null,
  });
  const version = versions.data?.find((v) => v.id === value);
  const preview = useQuery({
    queryKey: runKeys.preview(datasetId ?? 0, version?.number ?? 0),
    queryFn: ({ signal }) => previewDataset(datasetId ?? 0, version?.number ?? 0, signal),
    enabled: datasetId !== null && version !== undefined,
  });
  return (
    <div>
      <div className={ui.row}>
        <Field label="Dataset" help="Empty: the files named in data.train_files.">
          {(props) => (
            <select
              {...props}
              className={inputClass}
              value={datasetId ?? ""}
              onChange={(e) => {
                setDatasetId(e.target.value ? Number(e.target.value) : null);
                onChange(null);
              }}
            >
              <option value="">(config&apos;s files)</option>
              {datasets.data?.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        {datasetId !== null ? (
          <Field label="Version" errors={errors}>
            {(props) => (
              <select {...props} className={inputClass} value={value ?? ""} onChange={(e) => onChange(e.target.value ? Number(e.target.value) : null)}>
                <option value="">Choose a version</option>
                {versions.data?.map((v) => (
                  <option key={v.id} value={v.id}>
                    v{v.number} · {v.row_count} rows {v.message ? `· ${v.message}` : ""}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
      </div>
      {preview.isFetching ? <Loading what="a preview" /> : null}
      {preview.data ? (
        <div style={{ overflowX: "auto" }}>
          <table className={ui.mono} aria-label="Dataset preview" style={{ borderCollapse: "collapse" }}>
            <thead>
              <tr>
                {preview.data.columns.map((c) => (
                  <th key={c} style={{ textAlign: "left", padding: "2px 8px" }}>
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {preview.data.rows.map((row, i) => (
                <tr key={i}>
                  {preview.data.columns.map((c) => (
                    <td key={c} style={{ padding: "2px 8px", maxWidth: 320, overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" }}>
                      {typeof row[c] === "string" ? (row[c] as string) : JSON.stringify(row[c])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}

/** Reward version picker showing the chosen version's code. */
export function RewardVersionPicker({ slug, value, onChange, errors }: PickerProps) {
  const [functionId, setFunctionId] = useState<number | null>(null);
  const functions = useQuery({ queryKey: runKeys.rewards(slug), queryFn: ({ signal }) => listRewardFunctions(slug, signal) });
  const owner = functions.data?.find((f) => f.latest_version?.id === value)?.id ?? null;
  useEffect(() => {
    if (functionId === null && owner !== null) setFunctionId(owner);
  }, [functionId, owner]);
  const versions = useQuery({
    queryKey: runKeys.rewardVersions(functionId ?? 0),
    queryFn: ({ signal }) => listRewardVersions(functionId ?? 0, signal),
    enabled: functionId !== null,
  });
  const summary = versions.data?.find((v) => v.id === value);
  const version = useQuery({
    queryKey: runKeys.rewardVersion(functionId ?? 0, summary?.number ?? 0),
    queryFn: ({ signal }) => getRewardVersion(functionId ?? 0, summary?.number ?? 0, signal),
    enabled: functionId !== null && summary !== undefined,
  }).data;
  return (
    <div>
      <div className={ui.row}>
        <Field label="Reward function" help="Empty: the config's reward settings.">
          {(props) => (
            <select
              {...props}
              className={inputClass}
              value={functionId ?? ""}
              onChange={(e) => {
                setFunctionId(e.target.value ? Number(e.target.value) : null);
                onChange(null);
              }}
            >
              <option value="">(config&apos;s reward)</option>
              {functions.data?.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        {functionId !== null ? (
          <Field label="Reward version" errors={errors}>
            {(props) => (
              <select {...props} className={inputClass} value={value ?? ""} onChange={(e) => onChange(e.target.value ? Number(e.target.value) : null)}>
                <option value="">Choose a version</option>
                {versions.data?.map((v) => (
                  <option key={v.id} value={v.id}>
                    v{v.number} {v.message ? `· ${v.message}` : ""}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
      </div>
      {version?.code ? (
        <pre className={ui.mono} aria-label="Reward code" style={{ maxHeight: 240, overflow: "auto", background: "var(--color-surface-muted)", padding: 8, borderRadius: 6 }}>
          {version.code}
        </pre>
      ) : null}
    </div>
  );
}
