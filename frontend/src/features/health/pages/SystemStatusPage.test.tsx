import { act, fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockFetch, renderApp } from "../../../test/render";
import type { Health } from "../api";

const healthy: Health = {
  status: "ok",
  version: "0.1.0",
  components: {
    ray: { status: "disabled", latency_ms: 0, detail: "RAY_ADDRESS is not set" },
    database: { status: "ok", latency_ms: 1.234, detail: "PostgreSQL 16.4" },
    broker: { status: "ok", latency_ms: 42.4, detail: "redis 7.2.4" },
  },
};

const degraded: Health = {
  ...healthy,
  status: "degraded",
  components: {
    ...healthy.components,
    broker: {
      status: "error",
      latency_ms: 2001.5,
      detail: "ConnectionError: Error 111 connecting to 127.0.0.1:6379. Connection refused.",
    },
  },
};

function card(name: string) {
  return within(screen.getByTestId(`component-${name}`));
}

describe("System status page", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("shows each component with its status pill, latency and detail", async () => {
    const fetchMock = mockFetch(jsonResponse(healthy));
    renderApp("/status");

    expect(await screen.findByText("All systems operational", { selector: "h2" })).toBeInTheDocument();
    const names = screen.getAllByRole("heading", { level: 3 }).map((h) => h.textContent);
    expect(names).toEqual(["Database", "Broker", "Ray cluster"]);

    expect(card("database").getByText("Operational")).toHaveAttribute("data-status", "ok");
    expect(card("database").getByText("1.2 ms")).toBeInTheDocument();
    expect(card("database").getByText("PostgreSQL 16.4")).toBeInTheDocument();
    expect(card("broker").getByText("42 ms")).toBeInTheDocument();
    expect(card("ray").getByText("Disabled")).toHaveAttribute("data-status", "disabled");
    expect(card("ray").getByText("RAY_ADDRESS is not set")).toBeInTheDocument();
    expect(screen.getByText(/Not configured: Ray cluster/)).toBeInTheDocument();
    expect(screen.getByText("0.1.0")).toBeInTheDocument();

    const request = fetchMock.mock.calls[0]?.[0] as Request;
    expect(new URL(request.url).pathname).toBe("/api/health");
  });

  it("shows the degraded state and the failing component when the API answers 503", async () => {
    mockFetch(jsonResponse(degraded, 503));
    renderApp("/status");

    expect(await screen.findByText("Degraded service")).toBeInTheDocument();
    expect(screen.getByText(/Not answering: Broker/)).toBeInTheDocument();
    expect(card("broker").getByText("Error")).toHaveAttribute("data-status", "error");
    expect(card("broker").getByText("2.00 s")).toBeInTheDocument();
    expect(card("broker").getByText(/Connection refused/)).toBeInTheDocument();
    expect(card("database").getByText("Operational")).toBeInTheDocument();
    expect(screen.getByRole("link", { name: /Degraded/ })).toHaveAttribute("href", "/status");
  });

  it("folds a long detail to a few lines until asked for all of it", async () => {
    const longDetail = `ConnectionError: ${"HTTPConnectionPool(host='127.0.0.1', port=8265) ".repeat(4)}`;
    mockFetch(
      jsonResponse({
        ...healthy,
        status: "degraded",
        components: { ray: { status: "error", latency_ms: 3, detail: longDetail } },
      }, 503),
    );
    renderApp("/status");

    await screen.findByTestId("component-ray");
    const toggle = card("ray").getByRole("button", { name: "Show all" });
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    fireEvent.click(toggle);
    expect(card("ray").getByRole("button", { name: "Show less" })).toHaveAttribute("aria-expanded", "true");
    expect(card("ray").getByText(longDetail.trim())).toBeInTheDocument();
  });

  it("shows an error state when the API is unreachable", async () => {
    mockFetch(new TypeError("Failed to fetch"));
    renderApp("/status");

    expect(await screen.findByRole("heading", { name: "Can't reach the studio API" })).toBeInTheDocument();
    expect(screen.getByText(/did not answer: Failed to fetch/)).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Try again now" })).toBeEnabled();
    expect(screen.queryByTestId("component-database")).not.toBeInTheDocument();
    expect(screen.getByRole("link", { name: /API unreachable/ })).toBeInTheDocument();
  });

  it("treats a server error page as an error, not as a report", async () => {
    mockFetch(
      new Response("<h1>Server Error (500)</h1>", { status: 500, headers: { "Content-Type": "text/html" } }),
    );
    renderApp("/status");

    expect(await screen.findByText(/answered 500/)).toBeInTheDocument();
  });

  it("polls every 5 seconds and keeps the last report when contact is lost", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const fetchMock = mockFetch(jsonResponse(healthy), new TypeError("Failed to fetch"));
    renderApp("/status");

    expect(await screen.findByText("All systems operational", { selector: "h2" })).toBeInTheDocument();
    expect(fetchMock).toHaveBeenCalledTimes(1);

    await act(() => vi.advanceTimersByTimeAsync(5_000));

    expect(await screen.findByText("Lost contact with the studio API")).toBeInTheDocument();
    expect(fetchMock).toHaveBeenCalledTimes(2);
    expect(card("database").getByText("PostgreSQL 16.4")).toBeInTheDocument();
  });
});
