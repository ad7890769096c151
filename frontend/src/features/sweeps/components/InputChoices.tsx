import ui from "../../../components/ui.module.css";
import { useChoices } from "../../runs/hooks";
import { INPUT_KINDS, offered, optionLabel } from "../../runs/lib/inputKinds";
import { useDatasetVersionOptions, useModelOptions, useRewardVersionOptions, type InputOption } from "../hooks";
import type { InputField } from "../lib/types";

type Props = { slug: string; field: InputField; value: number[]; onChange: (ids: number[]) => void; errors: string[] };

/** The items an input parameter takes, ticked from the project's list of that kind. */
export function InputChoices(props: Props) {
  switch (props.field) {
    case "dataset_version":
    case "validation_version":
      return <DatasetVersions {...props} />;
    case "reward_version":
      return <RewardVersions {...props} />;
    case "model":
      return <Models {...props} role="policy" />;
    default:
      return <Kind {...props} />;
  }
}

function DatasetVersions(props: Props) {
  const { options, error } = useDatasetVersionOptions(props.slug);
  return <Checklist {...props} options={options} error={error} none="This project has no dataset versions: upload data on the Datasets page." />;
}

function RewardVersions(props: Props) {
  const { options, error } = useRewardVersionOptions(props.slug);
  return <Checklist {...props} options={options} error={error} none="This project has no reward versions: write one on the Reward functions page." />;
}

function Models(props: Props & { role: "policy" | "adapter" }) {
  const { options, error } = useModelOptions(props.slug, props.role);
  return <Checklist {...props} options={options} error={error} none="This project has no ready models: add one on the Models page." />;
}

/** A kind the run form picks with its generic picker (lib/inputKinds): the same list endpoint and filter. */
function Kind(props: Props) {
  const kind = INPUT_KINDS.find((k) => k.field === props.field);
  const choices = useChoices(kind?.list ?? "", props.slug, kind !== undefined);
  const options = kind && choices.data ? offered(kind, choices.data).map((item) => ({ id: item.id, label: optionLabel(kind, item), group: kind.label })) : undefined;
  return <Checklist {...props} options={kind ? options : []} error={choices.error} none={kind?.none || "None offered in this project."} />;
}

function Checklist({ value, onChange, errors, options, error, none, field }: Props & { options: InputOption[] | undefined; error: unknown; none: string }) {
  if (error) return <p className={ui.fieldError}>Could not load the choices: {error instanceof Error ? error.message : String(error)}</p>;
  if (!options) return <p className={ui.muted}>Loading the choices…</p>;
  if (!options.length) return <p className={ui.muted}>{none}</p>;
  const toggle = (id: number) => onChange(value.includes(id) ? value.filter((v) => v !== id) : [...value, id]);
  return (
    <fieldset style={{ border: "none", padding: 0, margin: 0 }} aria-invalid={errors.length > 0}>
      <legend className={ui.label}>Values (tick two or more)</legend>
      <div style={{ display: "grid", gap: 2, maxHeight: 180, overflowY: "auto" }}>
        {options.map((option) => (
          <label key={option.id} style={{ display: "flex", gap: 8, alignItems: "baseline", fontSize: "0.85rem" }}>
            <input type="checkbox" name={`${field}-${option.id}`} checked={value.includes(option.id)} onChange={() => toggle(option.id)} />
            {option.label}
            <span className={ui.muted}>#{option.id}</span>
          </label>
        ))}
      </div>
      {errors.length ? (
        <span className={ui.fieldError} role="alert">
          {errors.join(" ")}
        </span>
      ) : null}
    </fieldset>
  );
}
