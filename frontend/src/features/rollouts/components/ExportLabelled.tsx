import { useEffect, useId, useState, type KeyboardEvent } from "react";
import { Link } from "react-router";

import { FieldErrors } from "../../../api/client";
import { Button } from "../../../components/Button";
import { SelectField, TextField } from "../../../components/Field";
import ui from "../../../components/ui.module.css";
import type { Dataset } from "../../datasets/api";
import { useDatasets } from "../../datasets/hooks";
import { useRun } from "../../runs/hooks";
import type { ExportedVersion, ExportPreview, ExportRequest } from "../../samples/api";
import { useExportLabelled, useExportPreview } from "../../samples/hooks";
import reviewStyles from "./review.module.css";

type Mode = "new" | "existing";

const NAME_MAX = 100;

/** `<run>-labelled`, or `<run>-labelled-2`, ... when a dataset of the project has it. */
export function suggestedName(runName: string, datasets: Dataset[]): string {
  const taken = new Set(datasets.map((d) => d.name));
  const base = `${runName}-labelled`.slice(0, NAME_MAX - 4);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n += 1) {
    if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
  }
}

const count = (n: number) => n.toLocaleString("en-US");
const rows = (n: number) => `${count(n)} row${n === 1 ? "" : "s"}`;

const samples = (n: number) => `${count(n)} sample${n === 1 ? "" : "s"}`;

/** "Creates dataset X v1 with N rows, one per prompt of M labelled samples (good: a
 * samples, bad: b)" or "Adds v5 to dataset Y ...". */
export function describePreview(preview: ExportPreview): string {
  const labels = preview.labels.length
    ? ` (${preview.labels.map((l, i) => `${l.name}: ${i === 0 ? samples(l.count) : count(l.count)}`).join(", ")})`
    : "";
  const holding = `${rows(preview.rows)}, one per prompt of ${count(preview.samples)} labelled ${preview.samples === 1 ? "sample" : "samples"}${labels}`;
  if (preview.new_dataset) {
    return `Creates dataset ${preview.name} v1 with ${holding}.`;
  }
  const latest =
    preview.latest_number !== null && preview.latest_rows !== null
      ? `its v${preview.latest_number} has ${rows(preview.latest_rows)}`
      : "it has no versions yet";
  return (
    `Adds v${preview.number} to dataset ${preview.name} (${latest}) holding ` +
    `${holding}: this becomes its latest version.`
  );
}

function problem(error: Error | null): string | null {
  if (!error) return null;
  if (error instanceof FieldErrors) {
    const messages = Object.values(error.fields).flat();
    if (messages.length) return messages.join(" ");
  }
  return error.message;
}

type Pending = { request: ExportRequest; preview: ExportPreview };
type Done = { version: ExportedVersion; name: string };

/**
 * Writes the run's labelled samples (optionally one label) as a dataset version: version 1
 * of a new dataset (the default), or the next version of an existing one. Export first
 * shows what would be stored (a dry run) and waits for Confirm.
 */
export function ExportLabelled({ run, project }: { run: number; project: string }) {
  const datasets = useDatasets(project);
  const runDetail = useRun(run);
  const preview = useExportPreview(run);
  const exporting = useExportLabelled(run);
  const [mode, setMode] = useState<Mode>("new");
  const [name, setName] = useState<string | null>(null); // null: the suggested name
  const [dataset, setDataset] = useState(""); // "": the preselected one
  const [label, setLabel] = useState("");
  const [pending, setPending] = useState<Pending | null>(null);
  const [done, setDone] = useState<Done | null>(null);
  const ids = useId();
  const focus = (id: string) => document.getElementById(`${ids}-${id}`)?.focus();

  const choices = datasets.data ?? [];
  const runName = runDetail.data?.name ?? `run-${run}`;
  const newName = name ?? suggestedName(runName, choices);
  const trainedOn = runDetail.data?.inputs?.dataset?.dataset;
  const preselected = choices.find((d) => d.id === trainedOn) ?? choices[0];
  const chosen = dataset || (preselected ? String(preselected.id) : "");

  useEffect(() => {
    if (pending) document.getElementById(`${ids}-confirm`)?.focus();
  }, [pending, ids]);
  useEffect(() => {
    if (done) document.getElementById(`${ids}-open`)?.focus();
  }, [done, ids]);

  /** Any change makes a shown preview stale: it goes, and so do old answers. */
  const changed = () => {
    setPending(null);
    setDone(null);
    preview.reset();
    exporting.reset();
  };

  const request = (): ExportRequest | null => {
    const only = label.trim() ? { label: label.trim() } : {};
    if (mode === "new") return newName.trim() ? { new_dataset: newName.trim(), ...only } : null;
    return chosen ? { dataset: Number(chosen), ...only } : null;
  };
  const wanted = request();

  const review = () => {
    if (!wanted) return;
    setDone(null);
    exporting.reset();
    preview.mutate(wanted, { onSuccess: (answer) => setPending({ request: wanted, preview: answer }) });
  };

  const cancel = () => {
    setPending(null);
    focus("export");
  };

  const confirm = () => {
    if (!pending) return;
    const target = pending.preview.name;
    exporting.mutate(pending.request, {
      onSuccess: (version) => {
        setPending(null);
        setDone({ version, name: target });
        if (mode === "new") setName(null); // the next export suggests a free name again
      },
    });
  };

  const onDialogKey = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === "Escape" && !exporting.isPending) {
      event.preventDefault();
      cancel();
    }
  };

  const error = problem(exporting.error ?? preview.error);
  return (
    <section className={ui.card} aria-label="Export labelled samples">
      <h2 className={reviewStyles.sectionTitle}>Export labelled samples</h2>
      <div className={reviewStyles.filters}>
        <fieldset className={reviewStyles.choices} style={{ border: 0, padding: 0, margin: 0 }}>
          <legend>Export to</legend>
          <label className={reviewStyles.check}>
            <input
              type="radio"
              name={`${ids}-mode`}
              checked={mode === "new"}
              onChange={() => {
                setMode("new");
                changed();
              }}
            />
            New dataset
          </label>
          <label className={reviewStyles.check}>
            <input
              type="radio"
              name={`${ids}-mode`}
              checked={mode === "existing"}
              disabled={!choices.length}
              onChange={() => {
                setMode("existing");
                changed();
              }}
            />
            New version of an existing dataset
          </label>
        </fieldset>
        {mode === "new" ? (
          <TextField
            label="New dataset name"
            value={newName}
            maxLength={NAME_MAX}
            onChange={(value) => {
              setName(value);
              changed();
            }}
          />
        ) : (
          <SelectField
            label="Dataset"
            value={chosen}
            onChange={(value) => {
              setDataset(value);
              changed();
            }}
          >
            {choices.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name}
              </option>
            ))}
          </SelectField>
        )}
        <TextField
          label="Only the label (optional)"
          value={label}
          onChange={(value) => {
            setLabel(value);
            changed();
          }}
          placeholder="any label"
        />
        <Button
          id={`${ids}-export`}
          variant="primary"
          disabled={!wanted || preview.isPending || exporting.isPending}
          onClick={review}
        >
          {preview.isPending ? "Checking…" : "Export…"}
        </Button>
      </div>
      {pending ? (
        <div
          className={ui.card}
          role="dialog"
          aria-labelledby={`${ids}-confirm-title`}
          aria-describedby={`${ids}-confirm-text`}
          onKeyDown={onDialogKey}
          style={{ marginTop: 10 }}
        >
          <h3 id={`${ids}-confirm-title`} className={reviewStyles.sectionTitle}>
            Confirm the export
          </h3>
          <p id={`${ids}-confirm-text`}>{describePreview(pending.preview)}</p>
          <ExportExamples preview={pending.preview} />
          <div className={reviewStyles.buttons}>
            <Button id={`${ids}-confirm`} variant="primary" onClick={confirm} disabled={exporting.isPending}>
              {exporting.isPending ? "Exporting…" : "Confirm"}
            </Button>
            <Button onClick={cancel} disabled={exporting.isPending}>
              Cancel
            </Button>
          </div>
        </div>
      ) : null}
      {done ? (
        <div className={`${ui.notice} ${ui.noticeOk}`} role="status" style={{ marginTop: 10 }}>
          Exported {rows(done.version.row_count)} as {done.name} v{done.version.number}.{" "}
          <Link id={`${ids}-open`} to={`/p/${project}/datasets/${done.version.dataset}`}>
            Open {done.name} v{done.version.number}
          </Link>
        </div>
      ) : null}
      {error ? (
        <div className={`${ui.notice} ${ui.noticeError}`} role="alert" style={{ marginTop: 10 }}>
          {error}
        </div>
      ) : null}
    </section>
  );
}

/** The first rows the export writes, as the dataset will hold them (no chat template),
 * and a note when some rows can only be made from a sample's shown prompt. */
function ExportExamples({ preview }: { preview: ExportPreview }) {
  return (
    <>
      <table className={ui.table} aria-label="Rows it will write">
        <thead>
          <tr>
            <th scope="col">Prompt</th>
            <th scope="col">Ground truth</th>
            <th scope="col">Labels</th>
          </tr>
        </thead>
        <tbody>
          {preview.examples.map((row, i) => (
            <tr key={i}>
              <td className={ui.mono}>{row.prompt.map((m) => (row.prompt.length > 1 ? `${m.role}: ${m.content}` : m.content)).join("\n")}</td>
              <td className={ui.mono}>{row.ground_truth}</td>
              <td>{row.label_names}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {preview.rows > preview.examples.length ? <p className={ui.muted}>…and {rows(preview.rows - preview.examples.length)} more.</p> : null}
      {preview.from_text > 0 ? (
        <p className={`${ui.notice}`} role="note">
          {rows(preview.from_text)} {preview.from_text === 1 ? "comes" : "come"} from samples stored without their dataset row: the prompt is the text the sample shows, chat template included, and the row&apos;s own extra info is not there.
        </p>
      ) : null}
    </>
  );
}
