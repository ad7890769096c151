/** What a run is made of (its model, data, validation, reward), shown alike everywhere. */
import type { ReactNode } from "react";
import { Link } from "react-router";

import ui from "../../../components/ui.module.css";
import type { RunInputs as Inputs } from "../api";
import styles from "./RunInputs.module.css";

type DatasetRef = NonNullable<Inputs["dataset"]>;

export type InputItem = {
  key: string;
  label: string;
  /** What identifies it, to compare runs' inputs. */
  text: string;
  node: ReactNode;
};

function datasetText(ref: DatasetRef): string {
  return `${ref.name} v${ref.number}`;
}

function DatasetLink({ value, slug }: { value: DatasetRef; slug: string }) {
  return (
    <>
      <Link to={`/p/${slug}/datasets/${value.dataset}`}>{datasetText(value)}</Link> <span className={ui.muted}>· {value.rows} rows</span>
    </>
  );
}

function validationItem(inputs: Inputs, slug: string): { text: string; node: ReactNode } {
  const other = inputs.validation_dataset;
  if (inputs.validation === "none") return { text: "none", node: "none" };
  if (inputs.validation === "held_out") {
    const of = inputs.dataset ? datasetText(inputs.dataset) : "the training data";
    return {
      text: `held out of ${of}`,
      node: (
        <>
          held-out rows of {inputs.dataset ? <Link to={`/p/${slug}/datasets/${inputs.dataset.dataset}`}>{of}</Link> : of}{" "}
          <span className={ui.muted}>(rows labelled val/test, else 10%, at most 500)</span>
        </>
      ),
    };
  }
  if (other) return { text: `version ${datasetText(other)}`, node: <DatasetLink value={other} slug={slug} /> };
  return { text: "none", node: "none" };
}

/** The run's inputs as label / value rows (`text` is what runs are compared by). */
export function inputItems(inputs: Inputs, slug: string): InputItem[] {
  const items: InputItem[] = [];
  const { model, dataset, reward } = inputs;
  items.push({
    key: "model",
    label: "Model",
    text: model ? `${model.id}` : "",
    node: model ? (
      <span className={ui.row}>
        {model.name} <span className={ui.pill}>{model.kind}</span>
      </span>
    ) : (
      <span className={ui.muted}>not recorded</span>
    ),
  });
  items.push({
    key: "dataset",
    label: "Dataset",
    text: dataset ? `${dataset.version}` : "",
    node: dataset ? <DatasetLink value={dataset} slug={slug} /> : <span className={ui.muted}>not recorded</span>,
  });
  items.push({ key: "validation", label: "Validation", ...validationItem(inputs, slug) });
  // reward.kwargs: the keyword arguments it is called with (absent from older payloads).
  const kwargs = Object.keys(reward.kwargs ?? {}).length ? JSON.stringify(reward.kwargs) : "";
  items.push({
    key: "reward",
    label: "Reward",
    text: (reward.function !== null ? `version ${reward.version}` : `built-in ${reward.name}`) + (kwargs ? ` ${kwargs}` : ""),
    node: (
      <span className={ui.row}>
        {reward.function !== null ? (
          <Link to={`/p/${slug}/reward-functions/${reward.function}`}>
            {reward.name} v{reward.number}
          </Link>
        ) : (
          <>built-in: {reward.name}</>
        )}
        {kwargs ? (
          <span>
            <span className={ui.muted}>with</span> <code className={ui.mono}>{kwargs}</code>
          </span>
        ) : null}
      </span>
    ),
  });
  items.push({
    key: "reward_models",
    label: "Reward models",
    text: inputs.reward_models.map((m) => `${m.place}=${m.id}`).join(","),
    node: inputs.reward_models.length ? (
      <span className={ui.row}>
        {inputs.reward_models.map((m) => (
          <span key={m.place}>
            {m.name} <span className={ui.muted}>at {m.place}</span>
          </span>
        ))}
      </span>
    ) : (
      <span className={ui.muted}>none</span>
    ),
  });
  // Shown when chosen: most runs have neither (their critic starts from the run's model).
  for (const [key, label, chosen] of [
    ["critic_model", "Critic model", inputs.critic_model],
    ["lora_adapter", "LoRA adapter", inputs.lora_adapter],
  ] as const) {
    if (!chosen) continue;
    items.push({
      key,
      label,
      text: `${chosen.id}`,
      node: (
        <span className={ui.row}>
          {chosen.name} <span className={ui.pill}>{chosen.kind}</span>
        </span>
      ),
    });
  }
  const { provenance } = inputs;
  if (provenance) {
    // A run from before runs referenced resources whose files are gone: shown, never relaunched.
    items.push({
      key: "provenance",
      label: "Provenance",
      text: JSON.stringify(provenance.paths),
      node: (
        <span style={{ display: "grid" }}>
          {Object.entries(provenance.paths).map(([place, value]) => (
            <code key={place} className={ui.mono}>
              {place}: {typeof value === "string" ? value : JSON.stringify(value)}
            </code>
          ))}
          <span className={ui.muted}>{provenance.missing.join("; ")}: a record only, not relaunchable</span>
        </span>
      ),
    });
  }
  return items;
}

/** The run's inputs as a list: Model, Dataset, Validation, Reward, Reward models. */
export function RunInputs({ inputs, slug, label = "Inputs", inline = false }: { inputs: Inputs; slug: string; label?: string; inline?: boolean }) {
  return (
    <dl className={inline ? styles.inline : styles.list} aria-label={label}>
      {inputItems(inputs, slug).map((item) => (
        <div key={item.key} style={inline ? undefined : { display: "contents" }}>
          <dt>{item.label}</dt>
          <dd>{item.node}</dd>
        </div>
      ))}
    </dl>
  );
}

/** One line for a list: "arith v2 · reward arith v3" (or "built-in reward arith"). */
export function inputsLine(inputs: Inputs): string {
  const data = inputs.dataset ? `${inputs.dataset.name} v${inputs.dataset.number}` : inputs.provenance ? "provenance record" : "no dataset";
  const reward = inputs.reward.function !== null ? `reward ${inputs.reward.name} v${inputs.reward.number}` : `built-in reward ${inputs.reward.name}`;
  return `${data} · ${reward}`;
}

/** Which inputs differ between runs (by item key). */
export function differingInputs(all: Inputs[], slug: string): Set<string> {
  const texts = all.map((inputs) => new Map(inputItems(inputs, slug).map((i) => [i.key, i.text])));
  const keys = new Set(texts.flatMap((t) => [...t.keys()]));
  return new Set([...keys].filter((key) => texts.some((t) => t.get(key) !== texts[0]?.get(key))));
}

export const inputStyles = styles;
