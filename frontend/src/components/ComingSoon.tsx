import type { ReactNode } from "react";

import { EmptyState } from "./EmptyState";
import { PageHeader } from "./PageHeader";

type ComingSoonProps = {
  title: string;
  description: string;
  icon: ReactNode;
  /** One line on what the section will hold. */
  preview: string;
};

/** Placeholder page for a section that is planned but not built yet. */
export function ComingSoon({ title, description, icon, preview }: ComingSoonProps) {
  return (
    <>
      <PageHeader title={title} description={description} />
      <EmptyState icon={icon} badge="Coming soon" title={`${title} are on the way`}>
        {preview}
      </EmptyState>
    </>
  );
}
