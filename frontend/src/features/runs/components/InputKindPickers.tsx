/**
 * The generic picker of a run input chosen by id from a list (lib/inputKinds: every run
 * request field whose schema carries `x-input-kind`, such as the critic's model and a saved
 * LoRA adapter), shown when the config makes it relevant. `null` is "not chosen": a new
 * run's default, a clone's parent's choice; `kindInputsRequest` sends only the shown ones
 * that are chosen. The model, data, validation and reward pickers offer more than one list
 * and are their own (Pickers.tsx).
 */
import { SelectField } from "../../../components/Field";
import ui from "../../../components/ui.module.css";
import type { RunDetail } from "../api";
import { useChoices } from "../hooks";
import type { ConfigTree } from "../lib/configDiff";
import { kindShown, offered, optionLabel, type InputKind } from "../lib/inputKinds";

type KindPickerProps = {
  slug: string;
  kind: InputKind;
  config: ConfigTree;
  parent: RunDetail | null;
  value: number | null;
  onChange: (id: number | null) => void;
  errors: string[];
};

/** What a clone starts with: the parent's choice, from its `inputs` under the field's name. */
function parentsLabel(kind: InputKind, parent: RunDetail): string {
  const inputs = parent.inputs as Record<string, unknown>;
  const chosen = inputs[kind.field];
  if (chosen === null || chosen === undefined) return kind.unset;
  const name = typeof chosen === "object" && "name" in chosen ? String(chosen.name) : String(chosen);
  return `(the parent's: ${name})`;
}

/** One kind's choice among its list's offered items. */
export function KindPicker({ slug, kind, config, parent, value, onChange, errors }: KindPickerProps) {
  const shown = kindShown(kind, config);
  const choices = useChoices(kind.list, slug, shown);
  if (!shown) return null;
  const items = choices.data ? offered(kind, choices.data) : undefined;
  return (
    <div>
      <SelectField label={kind.label} help={kind.help} errors={errors} value={value ?? ""} onChange={(next) => onChange(next ? Number(next) : null)}>
        <option value="">{parent ? parentsLabel(kind, parent) : kind.unset}</option>
        {items?.map((item) => (
          <option key={item.id} value={item.id}>
            {optionLabel(kind, item)}
          </option>
        ))}
      </SelectField>
      {items?.length === 0 && kind.none ? <p className={ui.muted}>{kind.none}</p> : null}
    </div>
  );
}
