import { Link, useLocation } from "react-router";

import { EmptyState } from "../components/EmptyState";
import { AlertIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";

export function NotFoundPage() {
  const { pathname } = useLocation();
  return (
    <>
      <PageHeader title="Page not found" />
      <EmptyState icon={<AlertIcon size={26} />} title={`Nothing lives at ${pathname}`}>
        Check the address, or go back to <Link to="/runs">Runs</Link>.
      </EmptyState>
    </>
  );
}
