/** The project's models (what runs train and score with), and the ways to add one. */
import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { Page } from "../../../components/Layout";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { useProjectSlug } from "../../projects/hooks";
import { AddModelPanel } from "../components/AddModelPanel";
import { ModelIcon } from "../../../components/icons";
import { ModelsTable } from "../components/ModelsTable";
import { useModels } from "../hooks";

export function ModelsPage() {
  const slug = useProjectSlug();
  const models = useModels(slug);
  return (
    <Page>
      <PageHeader
        title="Models"
        description="Policies to train and reward models to score with: demo models, folders on the server, run checkpoints and Hugging Face downloads."
      />
      <AddModelPanel slug={slug} />
      {models.isPending ? <Loading what="models" /> : null}
      {models.isError ? <ErrorState title="The models could not be loaded" error={models.error} onRetry={() => void models.refetch()} /> : null}
      {models.data?.length === 0 ? (
        <EmptyState icon={<ModelIcon size={26} />} title="No models yet">
          Add one above: pick a folder the server offers (the demo model is one), a run&apos;s checkpoint, or a Hugging Face
          repository. New runs choose their model from this list.
        </EmptyState>
      ) : null}
      {models.data && models.data.length > 0 ? <ModelsTable slug={slug} models={models.data} /> : null}
    </Page>
  );
}
