import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { PlugOffIcon, RefreshIcon } from "../../../components/icons";
import { PageHeader } from "../../../components/PageHeader";
import { Time } from "../../../components/Time";
import { ComponentCard } from "../components/ComponentCard";
import { HealthSummary } from "../components/HealthSummary";
import { HEALTH_REFRESH_MS, useHealth } from "../hooks";
import { sortComponents } from "../lib/format";
import styles from "./SystemStatusPage.module.css";

const REFRESH_SECONDS = HEALTH_REFRESH_MS / 1000;

export function SystemStatusPage() {
  const { data, error, isPending, isFetching, dataUpdatedAt, refetch } = useHealth();

  const refresh = (
    <Button onClick={() => void refetch()} disabled={isFetching} aria-label="Refresh now">
      <RefreshIcon size={16} className={isFetching ? styles.spinning : undefined} />
      Refresh
    </Button>
  );

  return (
    <>
      <PageHeader
        title="System status"
        description={`Services the studio depends on. Checked every ${REFRESH_SECONDS} seconds.`}
        actions={
          <>
            {dataUpdatedAt > 0 ? (
              <span className={styles.checked}>Last checked <Time value={dataUpdatedAt} format="clock" /></span>
            ) : null}
            {refresh}
          </>
        }
      />

      {isPending ? (
        <div className={styles.grid} aria-busy="true" aria-label="Loading system status">
          {[0, 1, 2].map((i) => (
            <div key={i} className={styles.skeleton} />
          ))}
        </div>
      ) : data ? (
        <>
          <HealthSummary health={data} lostContactSince={error ? dataUpdatedAt : undefined} />
          <div className={styles.grid}>
            {sortComponents(data.components).map(([name, component]) => (
              <ComponentCard key={name} name={name} health={component} stale={Boolean(error)} />
            ))}
          </div>
          <p className={styles.footer}>
            Studio version <strong>{data.version}</strong> · Raw report at{" "}
            <a href="/api/health">/api/health</a> · <a href="/api/docs/">API docs</a>
          </p>
        </>
      ) : (
        <EmptyState
          tone="error"
          icon={<PlugOffIcon size={26} />}
          title="Can't reach the studio API"
          action={
            <Button variant="primary" onClick={() => void refetch()} disabled={isFetching}>
              Try again now
            </Button>
          }
        >
          <p>{error?.message}</p>
          <p className={styles.hint}>
            Is the studio server running? Trying again every {REFRESH_SECONDS} seconds.
          </p>
        </EmptyState>
      )}
    </>
  );
}
