import "@testing-library/jest-dom/vitest";
import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";

// `findBy*` and `waitFor` give up after a wall-clock time (1 s by default). `make test`
// runs this suite while mypy and the test assets' build share the machine's two cores, and
// a chain of a few mocked requests and renders has taken longer than 1 s there (a flake in
// CI, 2026-11-29): the bound is for a hung test, not a slow machine.
configure({ asyncUtilTimeout: 5_000 });

afterEach(() => {
  cleanup();
});
