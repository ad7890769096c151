import ui from "../../../components/ui.module.css";
import type { PlaygroundModel } from "../api";

const SHOWN: Record<string, { text: string; tone: string }> = {
  starting: { text: "loading model…", tone: ui.live ?? "" },
  loading: { text: "loading model…", tone: ui.live ?? "" },
  ready: { text: "warm", tone: ui.ok ?? "" },
  failed: { text: "failed to load", tone: ui.error ?? "" },
};

/** Whether the model is loaded: not loaded, loading, warm, or failed (with why). */
export function ServerState({ model }: { model: PlaygroundModel | undefined }) {
  const state = model?.server ?? null;
  const shown = state ? SHOWN[state] : undefined;
  return (
    <span className={`${ui.pill} ${shown?.tone ?? ""}`} data-testid="server-state" data-state={state ?? "none"} title={model?.server_message || undefined}>
      {shown?.text ?? "not loaded"}
    </span>
  );
}
