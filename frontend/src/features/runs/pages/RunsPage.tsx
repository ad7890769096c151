import { ComingSoon } from "../../../components/ComingSoon";
import { RunsIcon } from "../../../components/icons";

export function RunsPage() {
  return (
    <ComingSoon
      title="Runs"
      description="Training runs: queued, running and finished."
      icon={<RunsIcon size={26} />}
      preview="Start a GRPO or PPO run from a dataset, a reward function and a config, then watch its metrics and rollout samples stream in live."
    />
  );
}
