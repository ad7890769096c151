import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import { useDocumentKeys } from "./useDocumentKeys";

function Page({ onKey }: { onKey: (key: string) => void }) {
  useDocumentKeys((event) => onKey(event.key));
  return (
    <div>
      <input aria-label="Search" />
      <button type="button">Press</button>
    </div>
  );
}

describe("useDocumentKeys", () => {
  it("answers keys pressed with nothing focused", () => {
    const onKey = vi.fn();
    render(<Page onKey={onKey} />);
    fireEvent.keyDown(document.body, { key: "j" });
    expect(onKey).toHaveBeenCalledWith("j");
  });

  it("leaves typing, modified keys and a pressed button alone", () => {
    const onKey = vi.fn();
    render(<Page onKey={onKey} />);
    fireEvent.keyDown(screen.getByLabelText("Search"), { key: "1" });
    fireEvent.keyDown(document.body, { key: "1", ctrlKey: true });
    fireEvent.keyDown(screen.getByRole("button", { name: "Press" }), { key: "Enter" });
    expect(onKey).not.toHaveBeenCalled();
    fireEvent.keyDown(screen.getByRole("button", { name: "Press" }), { key: "2" });
    expect(onKey).toHaveBeenCalledWith("2");
  });
});
