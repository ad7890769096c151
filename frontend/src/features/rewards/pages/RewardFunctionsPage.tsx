import { ComingSoon } from "../../../components/ComingSoon";
import { RewardIcon } from "../../../components/icons";

export function RewardFunctionsPage() {
  return (
    <ComingSoon
      title="Reward functions"
      description="The code that scores each rollout sample."
      icon={<RewardIcon size={26} />}
      preview="Write compute_score functions in the browser, test them against sample rows in a sandbox, and keep every version."
    />
  );
}
