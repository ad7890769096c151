import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { Time } from "./Time";

describe("Time", () => {
  it("renders a machine-readable time with the full instant on hover", () => {
    render(<Time value="2026-03-07T09:05:00Z" format="date" />);
    const time = screen.getByText(new Date("2026-03-07T09:05:00Z").toLocaleDateString());
    expect(time.tagName).toBe("TIME");
    expect(time).toHaveAttribute("datetime", "2026-03-07T09:05:00.000Z");
    expect(time).toHaveAttribute("title", new Date("2026-03-07T09:05:00Z").toLocaleString());
  });

  it("says what a missing instant means", () => {
    render(<Time value={null} empty="never" />);
    expect(screen.getByText("never")).toBeInTheDocument();
  });
});
