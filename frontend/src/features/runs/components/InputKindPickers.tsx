/**
 * Pickers for the run inputs that apply to some configs only, each shown when its config
 * makes it relevant: the critic's model (an estimator that trains a critic, as the config
 * schema marks them with `x-needs-critic`) and a saved LoRA adapter (LoRA on:
 * `actor.lora.rank` above 0). `null` is "not chosen": a new run's default, a clone's
 * parent's choice; `kindInputsRequest` sends only the shown ones that are chosen.
 */
import { SelectField } from "../../../components/Field";
import ui from "../../../components/ui.module.css";
import type { Model } from "../../models/api";
import { useReadyModels } from "../../models/hooks";
import type { RunDetail } from "../api";
import type { ConfigTree } from "../lib/configDiff";
import { getAt } from "../lib/configSchema";

type KindPickerProps = {
  slug: string;
  config: ConfigTree;
  parent: RunDetail | null;
  value: number | null;
  onChange: (id: number | null) => void;
  errors: string[];
};

type EstimatorSchema = { default?: unknown; "x-needs-critic"?: unknown };

function estimatorSchema(schema: Record<string, unknown>): EstimatorSchema {
  const defs = schema.$defs as Record<string, { properties?: Record<string, EstimatorSchema> }> | undefined;
  return defs?.AlgorithmConfig?.properties?.adv_estimator ?? {};
}

/** The config's estimator trains a critic (the schema's `x-needs-critic` list names those). */
export function criticModelShown(schema: Record<string, unknown>, config: ConfigTree): boolean {
  const field = estimatorSchema(schema);
  const estimator = getAt(config, "algorithm.adv_estimator") ?? field.default;
  const needing = Array.isArray(field["x-needs-critic"]) ? field["x-needs-critic"] : [];
  return needing.includes(estimator);
}

/** LoRA is on in the config. */
export function loraAdapterShown(config: ConfigTree): boolean {
  const rank = getAt(config, "actor.lora.rank");
  return typeof rank === "number" && rank > 0;
}

/** The request fields for the shown pickers' choices (none for what is not chosen). */
export function kindInputsRequest(
  schema: Record<string, unknown>,
  config: ConfigTree,
  chosen: { criticModel: number | null; loraAdapter: number | null },
): { critic_model?: number; lora_adapter?: number } {
  return {
    ...(criticModelShown(schema, config) && chosen.criticModel !== null ? { critic_model: chosen.criticModel } : {}),
    ...(loraAdapterShown(config) && chosen.loraAdapter !== null ? { lora_adapter: chosen.loraAdapter } : {}),
  };
}

function options(models: Model[] | undefined) {
  return models?.map((m) => (
    <option key={m.id} value={m.id}>
      {m.name} ({m.kind})
    </option>
  ));
}

/** The model the critic starts from: the run's model by default, or another with its tokenizer. */
export function CriticModelPicker({ slug, schema, config, parent, value, onChange, errors }: KindPickerProps & { schema: Record<string, unknown> }) {
  const models = useReadyModels(slug, "policy");
  if (!criticModelShown(schema, config)) return null;
  const parents = parent?.inputs.critic_model;
  return (
    <SelectField
      label="Critic model"
      help="The model the critic's body starts from, under a fresh value head; it must have the run's tokenizer."
      errors={errors}
      value={value ?? ""}
      onChange={(next) => onChange(next ? Number(next) : null)}
    >
      <option value="">{parents ? `(the parent's: ${parents.name})` : "(the run's model)"}</option>
      {options(models.data)}
    </SelectField>
  );
}

/** A saved LoRA adapter the actor starts from: fresh adapters by default. */
export function LoraAdapterPicker({ slug, config, parent, value, onChange, errors }: KindPickerProps) {
  const adapters = useReadyModels(slug, "adapter");
  if (!loraAdapterShown(config)) return null;
  const parents = parent?.inputs.lora_adapter;
  return (
    <div>
      <SelectField
        label="LoRA adapter"
        help="A saved adapter of the project to start from (its rank and alpha must be actor.lora's)."
        errors={errors}
        value={value ?? ""}
        onChange={(next) => onChange(next ? Number(next) : null)}
      >
        <option value="">{parents ? `(the parent's: ${parents.name})` : "(fresh adapters)"}</option>
        {options(adapters.data)}
      </SelectField>
      {adapters.data?.length === 0 ? (
        <p className={ui.muted}>No adapters in this project: add the checkpoint of a LoRA run with actor.lora.export: adapter on the Models page.</p>
      ) : null}
    </div>
  );
}
