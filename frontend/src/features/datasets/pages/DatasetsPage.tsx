import { ComingSoon } from "../../../components/ComingSoon";
import { DatasetsIcon } from "../../../components/icons";

export function DatasetsPage() {
  return (
    <ComingSoon
      title="Datasets"
      description="Prompt datasets your runs train and evaluate on."
      icon={<DatasetsIcon size={26} />}
      preview="Upload JSONL, Parquet or CSV prompt sets, preview their rows and check splits and schema before a run uses them."
    />
  );
}
