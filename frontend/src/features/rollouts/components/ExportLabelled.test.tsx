import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { MemoryRouter } from "react-router";

import { jsonResponse, mockApi } from "../../../test/render";
import { describePreview, ExportLabelled, suggestedName } from "./ExportLabelled";

const DATASETS = [
  { id: 4, name: "arith" },
  { id: 9, name: "gsm8k" },
];

type Body = { new_dataset?: string; dataset?: number; label?: string; dry_run: boolean };

/** The run (trained on `trainedOn`), its project's datasets, and an export endpoint. */
function setup({ trainedOn = null as number | null, taken = false } = {}) {
  const posted: Body[] = [];
  const fetchMock = mockApi({
    "GET /api/runs/3/": {
      id: 3,
      name: "gsm8k-grpo",
      inputs: {
        dataset: trainedOn ? { dataset: trainedOn, name: "gsm8k", version: 40, number: 4, rows: 1200 } : null,
      },
    },
    "GET /api/datasets/": { count: 2, next: null, previous: null, results: DATASETS },
    "POST /api/runs/3/export-labelled": (request: Request) => {
      const answer = request.json().then((body: Body) => {
        posted.push(body);
        if (taken && body.new_dataset) {
          const message = `A dataset named '${body.new_dataset}' already exists in 'demo'.`;
          return jsonResponse(
            { error: { code: "validation_error", message: `new_dataset: ${message}`, fields: { new_dataset: [message] } } },
            400,
          );
        }
        const existing = DATASETS.find((d) => d.id === body.dataset);
        if (body.dry_run) {
          return jsonResponse({
            rows: 3,
            samples: 5,
            labels: [{ name: "good", count: 4 }, { name: "bad", count: 1 }],
            from_text: 1,
            examples: [{ data_source: "arith", prompt: [{ role: "user", content: "max(2,15)=" }], ground_truth: "15", label_names: "good" }],
            new_dataset: !existing,
            dataset: existing?.id ?? null,
            name: existing?.name ?? body.new_dataset,
            number: existing ? 5 : 1,
            latest_number: existing ? 4 : null,
            latest_rows: existing ? 1200 : null,
          });
        }
        return jsonResponse(
          { id: 77, dataset: existing?.id ?? 12, number: existing ? 5 : 1, row_count: 3, size_bytes: 1, checksum: "x", message: "", created_at: "2026-01-01T00:00:00Z" },
          201,
        );
      });
      return answer as unknown as Response;
    },
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <MemoryRouter>
        <ExportLabelled run={3} project="demo" />
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return { posted, fetchMock };
}

test("exporting defaults to a new dataset and confirms what it creates before writing", async () => {
  const { posted } = setup();
  const name = await screen.findByDisplayValue("gsm8k-grpo-labelled");
  expect(screen.getByRole("radio", { name: "New dataset" })).toBeChecked();
  expect(name).toHaveAccessibleName("New dataset name");

  fireEvent.click(screen.getByRole("button", { name: "Export…" }));
  const dialog = await screen.findByRole("dialog", { name: "Confirm the export" });
  expect(dialog).toHaveTextContent("max(2,15)=");
  expect(dialog).toHaveTextContent("1 row comes from samples stored without their dataset row");
  expect(dialog).toHaveTextContent("Creates dataset gsm8k-grpo-labelled v1 with 3 rows, one per prompt of 5 labelled samples (good: 4 samples, bad: 1).");
  expect(screen.getByRole("button", { name: "Confirm" })).toHaveFocus();
  expect(posted).toEqual([{ new_dataset: "gsm8k-grpo-labelled", dry_run: true }]);

  fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
  expect(screen.queryByRole("dialog")).toBeNull();
  expect(screen.getByRole("button", { name: "Export…" })).toHaveFocus();
  fireEvent.click(screen.getByRole("button", { name: "Export…" }));
  await screen.findByRole("dialog");
  fireEvent.click(screen.getByRole("button", { name: "Confirm" }));
  const link = await screen.findByRole("link", { name: "Open gsm8k-grpo-labelled v1" });
  expect(link).toHaveAttribute("href", "/p/demo/datasets/12");
  expect(link).toHaveFocus();
  expect(screen.getByRole("status")).toHaveTextContent("Exported 3 rows as gsm8k-grpo-labelled v1.");
  expect(screen.queryByRole("dialog")).toBeNull();
  expect(posted.map((b) => b.dry_run)).toEqual([true, true, false]);
  expect(posted[2]).toEqual({ new_dataset: "gsm8k-grpo-labelled", dry_run: false });
});

test("a new version of an existing dataset preselects the run's dataset and Escape cancels it", async () => {
  const { posted } = setup({ trainedOn: 9 });
  await screen.findByDisplayValue("gsm8k-grpo-labelled");
  fireEvent.click(screen.getByRole("radio", { name: "New version of an existing dataset" }));
  const select = await screen.findByRole("combobox", { name: "Dataset" });
  await waitFor(() => expect(select).toHaveValue("9"));
  fireEvent.change(screen.getByRole("textbox", { name: "Only the label (optional)" }), {
    target: { value: "good" },
  });

  fireEvent.click(screen.getByRole("button", { name: "Export…" }));
  const dialog = await screen.findByRole("dialog");
  expect(dialog).toHaveTextContent(
    "Adds v5 to dataset gsm8k (its v4 has 1,200 rows) holding 3 rows, one per prompt of 5 labelled samples (good: 4 samples, bad: 1): this becomes its latest version.",
  );
  expect(posted).toEqual([{ dataset: 9, label: "good", dry_run: true }]);

  fireEvent.keyDown(screen.getByRole("button", { name: "Confirm" }), { key: "Escape" });
  expect(screen.queryByRole("dialog")).toBeNull();
  expect(screen.getByRole("button", { name: "Export…" })).toHaveFocus();
  expect(posted.filter((b) => !b.dry_run)).toEqual([]); // nothing was written
});

test("a taken new dataset name is shown and nothing is exported", async () => {
  const { posted } = setup({ taken: true });
  await screen.findByDisplayValue("gsm8k-grpo-labelled");
  fireEvent.click(screen.getByRole("button", { name: "Export…" }));
  expect(await screen.findByRole("alert")).toHaveTextContent(
    "A dataset named 'gsm8k-grpo-labelled' already exists in 'demo'.",
  );
  expect(screen.queryByRole("dialog")).toBeNull();
  expect(posted).toEqual([{ new_dataset: "gsm8k-grpo-labelled", dry_run: true }]);
});

test("the suggested name skips names the project's datasets have", () => {
  const named = (...names: string[]) => names.map((name, id) => ({ id, name }) as never);
  expect(suggestedName("r", named("x"))).toBe("r-labelled");
  expect(suggestedName("r", named("r-labelled", "r-labelled-2"))).toBe("r-labelled-3");
});

test("an existing dataset without versions is described as such", () => {
  expect(
    describePreview({
      rows: 1, samples: 1, labels: [{ name: "bad", count: 1 }], new_dataset: false, dataset: 2, name: "empty",
      number: 1, latest_number: null, latest_rows: null, from_text: 0, examples: [],
    }), // prettier-ignore
  ).toBe("Adds v1 to dataset empty (it has no versions yet) holding 1 row, one per prompt of 1 labelled sample (bad: 1 sample): this becomes its latest version.");
});
