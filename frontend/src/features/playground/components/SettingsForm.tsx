import { Field, SelectField, TextField } from "../../../components/Field";
import { Card } from "../../../components/Layout";
import type { PlaygroundModel } from "../api";
import type { SettingsDraft } from "../lib/settings";
import styles from "../playground.module.css";

type SettingsFormProps = {
  models: PlaygroundModel[];
  model: string;
  compare: string;
  onModel: (key: string) => void;
  onCompare: (key: string) => void;
  settings: SettingsDraft;
  onSettings: (settings: SettingsDraft) => void;
  errors: (path: string) => string[];
};

/** Which models answer, and how: the system prompt and the sampling settings. */
export function SettingsForm({ models, model, compare, onModel, onCompare, settings, onSettings, errors }: SettingsFormProps) {
  const set = (key: keyof SettingsDraft) => (value: string) => onSettings({ ...settings, [key]: value });
  const options = models.map((m) => (
    <option key={m.key} value={m.key}>
      {m.label}
      {m.kind === "checkpoint" ? "" : ` (${m.detail.toLowerCase()})`}
    </option>
  ));
  return (
    <Card label="Chat settings">
      <div className={styles.settings}>
        <SelectField label="Model" value={model} onChange={onModel} errors={errors("chats.0.target")}>
          {options}
        </SelectField>
        <SelectField label="Compare with" value={compare} onChange={onCompare} help="A second model answers the same messages, side by side." errors={errors("chats.1.target")}>
          <option value="">No second model</option>
          {options}
        </SelectField>
      </div>
      <Field label="System prompt" help="Sent before the conversation, as the template's system message.">
        {(props) => <textarea {...props} className={styles.system} rows={2} value={settings.system} onChange={(e) => set("system")(e.target.value)} placeholder="You are a helpful assistant." />}
      </Field>
      <div className={styles.sampling}>
        <TextField label="Temperature" type="number" min={0} max={2} step={0.1} value={settings.temperature} onChange={set("temperature")} help="0 is greedy" errors={errors("sampling.temperature")} />
        <TextField label="Top-p" type="number" min={0.01} max={1} step={0.05} value={settings.topP} onChange={set("topP")} errors={errors("sampling.top_p")} />
        <TextField label="Max new tokens" type="number" min={1} step={1} value={settings.maxNewTokens} onChange={set("maxNewTokens")} errors={errors("sampling.max_new_tokens")} />
        <TextField label="Minimum reply length" type="number" min={0} step={1} value={settings.minNewTokens} onChange={set("minNewTokens")} help="tokens before the reply may end" errors={errors("sampling.min_new_tokens")} />
      </div>
    </Card>
  );
}
