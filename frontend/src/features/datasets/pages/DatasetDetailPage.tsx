/** One dataset: upload a version, its versions, and the chosen version's stats and rows. */
import { useCallback, useState } from "react";
import { Link, useParams } from "react-router";

import { ErrorState } from "../../../components/ErrorState";
import { Card, Columns, Page } from "../../../components/Layout";
import { PageHeader } from "../../../components/PageHeader";
import { Time } from "../../../components/Time";
import ui from "../../../components/ui.module.css";
import { UploadPanel } from "../components/UploadPanel";
import { VersionDiff } from "../components/VersionDiff";
import { VersionView } from "../components/VersionView";
import { useDataset, useDatasetVersions } from "../hooks";
import styles from "./DatasetDetailPage.module.css";

export function DatasetDetailPage() {
  const params = useParams();
  const slug = params.slug ?? "";
  const datasetId = Number(params.datasetId);
  const dataset = useDataset(datasetId);
  const versions = useDatasetVersions(datasetId);
  const [chosen, setChosen] = useState<number | null>(null);
  const onUploaded = useCallback((number: number) => setChosen(number), []);
  const shown = versions.data?.find((v) => v.number === chosen) ?? versions.data?.[0] ?? null;

  if (dataset.isError) {
    return <ErrorState title={`Could not load dataset #${datasetId}`} error={dataset.error} onRetry={() => void dataset.refetch()} back={{ to: `/p/${slug}/datasets`, label: "All datasets" }} />;
  }
  return (
    <Page>
      <PageHeader
        title={dataset.data?.name ?? "Dataset"}
        description={
          <>
            <Link to={`/p/${slug}/datasets`}>Datasets</Link>
            {dataset.data?.description ? ` · ${dataset.data.description}` : ""}
          </>
        }
      />
      <Columns>
        <UploadPanel datasetId={datasetId} onUploaded={onUploaded} />
        <Card label="Versions" title="Versions">
          {versions.isPending ? <p className={ui.muted}>Loading…</p> : null}
          {versions.data?.length === 0 ? <p className={ui.muted}>No versions yet: upload a file to make version 1.</p> : null}
          <ul className={styles.versionList}>
            {versions.data?.map((v) => (
              <li key={v.id} className={styles.versionItem}>
                <button
                  type="button"
                  className={v.number === shown?.number ? styles.selected : undefined}
                  aria-pressed={v.number === shown?.number}
                  onClick={() => setChosen(v.number)}
                >
                  v{v.number}
                </button>
                <span>
                  {v.row_count} rows · {v.source_format}
                  {v.message ? ` · ${v.message}` : ""}
                </span>
                <span className={ui.muted}>
                  {v.created_by}, <Time value={v.created_at} />
                </span>
                <a href={v.download_url} download>
                  download
                </a>
              </li>
            ))}
          </ul>
        </Card>
      </Columns>
      {shown ? <VersionView key={shown.id} version={shown} /> : null}
      {versions.data && versions.data.length >= 2 ? (
        <VersionDiff key={versions.data[0]?.id} datasetId={datasetId} versions={versions.data} />
      ) : null}
    </Page>
  );
}
