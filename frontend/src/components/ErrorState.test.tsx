import { fireEvent, render, screen } from "@testing-library/react";
import { MemoryRouter } from "react-router";
import { describe, expect, it, vi } from "vitest";

import { ApiError } from "../api/errors";
import { ErrorState } from "./ErrorState";

describe("ErrorState", () => {
  it("offers to try again after a failure that may pass", () => {
    const onRetry = vi.fn();
    render(<ErrorState title="Could not load run #4" error={new ApiError("The studio answered 503.", 503)} onRetry={onRetry} />);
    fireEvent.click(screen.getByRole("button", { name: "Try again" }));
    expect(onRetry).toHaveBeenCalledTimes(1);
    expect(screen.getByText("The studio answered 503.")).toBeInTheDocument();
  });

  it("says what is missing and offers the way back, not asking again, after a 404", () => {
    const error = new ApiError("There is no run #4 in your projects.", 404, "not_found");
    render(
      <MemoryRouter>
        <ErrorState title="Could not load run #4" error={error} onRetry={vi.fn()} back={{ to: "/p/demo/runs", label: "All runs" }} />
      </MemoryRouter>,
    );
    expect(screen.getByText("There is no run #4 in your projects.")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Try again" })).toBeNull();
    expect(screen.getByRole("link", { name: "All runs" }).getAttribute("href")).toBe("/p/demo/runs");
  });
});
