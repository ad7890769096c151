import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import { ConfirmDialog } from "./ConfirmDialog";

function setup() {
  const onConfirm = vi.fn();
  const onCancel = vi.fn();
  render(
    <ConfirmDialog open title="Cancel run #4?" confirmLabel="Cancel run" onConfirm={onConfirm} onCancel={onCancel}>
      The trainer stops.
    </ConfirmDialog>,
  );
  return { onConfirm, onCancel };
}

describe("ConfirmDialog", () => {
  it("is a labelled modal whose confirm button has the focus, so Enter confirms", () => {
    const { onConfirm, onCancel } = setup();
    const dialog = screen.getByRole("alertdialog", { name: "Cancel run #4?" });
    expect(dialog.getAttribute("aria-modal")).toBe("true");
    expect(document.activeElement).toBe(screen.getByRole("button", { name: "Cancel run" }));
    fireEvent.keyDown(document.activeElement!, { key: "Enter" });
    expect(onConfirm).toHaveBeenCalledTimes(1);
    expect(onCancel).not.toHaveBeenCalled();
  });

  it("cancels on Escape, and on Enter once Tab moved to the cancel button, keeping Tab inside", () => {
    const { onConfirm, onCancel } = setup();
    const dialog = screen.getByRole("alertdialog");
    fireEvent.keyDown(dialog, { key: "Tab" });
    expect(document.activeElement).toBe(screen.getByRole("button", { name: "Keep it" }));
    fireEvent.keyDown(dialog, { key: "Enter" });
    expect(onCancel).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(dialog, { key: "Tab" });
    expect(document.activeElement).toBe(screen.getByRole("button", { name: "Cancel run" }));
    fireEvent.keyDown(dialog, { key: "Escape" });
    expect(onCancel).toHaveBeenCalledTimes(2);
    expect(onConfirm).not.toHaveBeenCalled();
  });

  it("renders nothing while closed", () => {
    render(<ConfirmDialog open={false} title="t" confirmLabel="ok" onConfirm={() => undefined} onCancel={() => undefined} />);
    expect(screen.queryByRole("alertdialog")).toBeNull();
  });
});
