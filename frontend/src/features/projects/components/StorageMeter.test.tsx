import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { StorageGauge } from "./StorageMeter";

const GiB = 1024 ** 3;
const kinds = { runs: 3 * GiB, evaluations: 0, datasets: GiB, models: 0 };

describe("StorageGauge", () => {
  it("shows used against the quota, with a bar and the kinds in its title", () => {
    render(<StorageGauge storage={{ used_bytes: 4 * GiB, quota_bytes: 10 * GiB, over_quota: false, by_kind: kinds }} />);
    const meter = screen.getByTestId("storage-meter");
    expect(meter.textContent).toContain("4.0 GiB of 10.0 GiB");
    expect(meter.title).toContain("Runs 3.0 GiB");
    expect(meter.title).toContain("datasets 1.0 GiB");
    const bar = screen.getByRole("progressbar", { name: "Project storage used" });
    expect(bar.getAttribute("aria-valuenow")).toBe("40");
  });

  it("fills the bar, in the error colour, at the quota", () => {
    render(<StorageGauge storage={{ used_bytes: 12 * GiB, quota_bytes: 10 * GiB, over_quota: true, by_kind: kinds }} />);
    const bar = screen.getByRole("progressbar");
    expect(bar.getAttribute("aria-valuenow")).toBe("100");
    expect((bar.firstChild as HTMLElement).className).toMatch(/error/);
  });

  it("says used only, and no bar, without a quota", () => {
    render(<StorageGauge storage={{ used_bytes: 512, quota_bytes: 0, over_quota: false, by_kind: kinds }} />);
    expect(screen.getByTestId("storage-meter").textContent).toBe("Storage 512 B used (no quota)");
    expect(screen.queryByRole("progressbar")).toBeNull();
  });
});
