import type { Data, Layout } from "plotly.js-basic-dist-min";
import { type KeyboardEvent, type MouseEvent, useMemo, useState } from "react";

import { Button } from "../../../components/Button";
import { SelectField } from "../../../components/Field";
import { PlotlyChart } from "../../../components/PlotlyChart";
import ui from "../../../components/ui.module.css";
import { colorOf, legendStops, scaleFor, textColorOf, visibleToken } from "../lib/tokenColors";
import type { TokenSeries } from "../lib/tokenData";
import review from "./review.module.css";
import styles from "./TokenStrip.module.css";

/** Tokens shown at once; longer responses get a window and a chart to move it. */
export const WINDOW = 512;

function formatValue(value: unknown): string {
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(4);
  return JSON.stringify(value);
}

/** Says what a masked token is: context the policy did not write, so it carries no loss. */
export const MASKED_LEGEND = "not trained: tool/user tokens";

/** The response's tokens coloured by one metric, masked (not trained) tokens hatched,
 * values on hover or with the arrow keys. */
export function TokenStrip({ series }: { series: TokenSeries }) {
  const names = Object.keys(series.metrics);
  const [metric, setMetric] = useState(names.find((n) => /logprob/i.test(n)) ?? names[0] ?? "");
  const [start, setStart] = useState(0);
  const [hovered, setHovered] = useState<number | null>(null);
  const values = useMemo(() => series.metrics[metric] ?? [], [series, metric]);
  const { lossMask } = series;
  const anyMasked = lossMask?.includes(false) ?? false;
  // The scale spans the policy's own tokens: tool results' values would stretch it.
  const scale = useMemo(
    () => scaleFor(metric, lossMask ? values.filter((_, i) => lossMask[i]) : values),
    [metric, values, lossMask],
  );
  const total = series.tokens.length;
  const windowed = total > WINDOW;
  const end = Math.min(total, start + WINDOW);

  const chartData = useMemo<Data[]>(
    () => [
      {
        type: "scatter",
        mode: "lines",
        x: values.map((_, i) => i),
        y: values,
        line: { color: "#4f46e5", width: 1 },
        hovertemplate: "token %{x}: %{y}<extra></extra>",
      },
    ],
    [values],
  );
  const chartLayout = useMemo<Partial<Layout>>(
    () => ({
      height: 140,
      margin: { t: 8, r: 8, b: 28, l: 44 },
      xaxis: { title: { text: "position" } },
      shapes: windowed
        ? [
            {
              type: "rect",
              xref: "x",
              yref: "paper",
              x0: start,
              x1: end,
              y0: 0,
              y1: 1,
              fillcolor: "rgba(79, 70, 229, 0.12)",
              line: { width: 0 },
            },
          ]
        : [],
    }),
    [windowed, start, end],
  );

  const onHover = (event: MouseEvent<HTMLDivElement>) => {
    const index = (event.target as HTMLElement).dataset.index;
    setHovered(index === undefined ? null : Number(index));
  };
  // Keys walk the tokens in view (the strip is one tab stop, not one per token).
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const at = hovered !== null && hovered >= start && hovered < end ? hovered : null;
    const moves: Record<string, number> = {
      ArrowRight: at === null ? start : Math.min(end - 1, at + 1),
      ArrowLeft: at === null ? end - 1 : Math.max(start, at - 1),
      Home: start,
      End: end - 1,
    };
    const next = moves[event.key];
    if (next === undefined || end <= start) return;
    event.preventDefault();
    setHovered(next);
  };

  return (
    <section className={`${ui.card} ${review.section}`} aria-label="Tokens">
      <div className={review.filters}>
        <SelectField label="Colour by" value={metric} onChange={setMetric}>
          {names.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </SelectField>
        <div className={styles.legend} aria-label="Legend" data-testid="token-legend">
          <span>{scale.kind === "diverging" ? "diverging around 0" : "sequential"}:</span>
          {scale.min === scale.max ? (
            <span>every token has {metric} {scale.min.toFixed(3)}</span>
          ) : (
            legendStops(scale).map((stop, i) => (
              <span key={i} className={styles.legend}>
                <span className={styles.swatch} style={{ background: stop.color }} />
                {stop.value.toFixed(2)}
              </span>
            ))
          )}
          {anyMasked ? (
            <span className={styles.legend} data-testid="masked-legend">
              <span className={`${styles.swatch} ${styles.masked}`} />
              {MASKED_LEGEND}
            </span>
          ) : null}
        </div>
      </div>
      {windowed ? (
        <>
          <PlotlyChart
            data={chartData}
            layout={chartLayout}
            label={`${metric} by token position`}
            className={review.chart}
            events={{
              click: (event) => {
                const x = event.points[0]?.x;
                if (typeof x === "number") setStart(Math.max(0, Math.min(total - WINDOW, x - WINDOW / 2)));
              },
            }}
          />
          <div className={review.buttons}>
            <Button disabled={start === 0} onClick={() => setStart(Math.max(0, start - WINDOW))}>
              Previous tokens
            </Button>
            <span className={ui.muted}>
              tokens {start}–{end - 1} of {total}
            </span>
            <Button disabled={end >= total} onClick={() => setStart(Math.min(total - WINDOW, start + WINDOW))}>
              Next tokens
            </Button>
          </div>
        </>
      ) : null}
      <div className={styles.tooltip} aria-live="polite" data-testid="token-details">
        {hovered !== null
          ? `#${hovered} ${JSON.stringify(series.tokens[hovered])} · ` +
            (lossMask && !lossMask[hovered] ? `${MASKED_LEGEND} · ` : "") +
            Object.entries(series.all)
              .filter(([key]) => key !== "tokens")
              .map(([key, list]) => `${key} ${formatValue(list[hovered])}`)
              .join(" · ")
          : "Point at a token (or focus the tokens and use the arrow keys) to see every recorded value."}
      </div>
      <div
        className={styles.tokens}
        onMouseOver={onHover}
        onKeyDown={onKeyDown}
        tabIndex={0}
        role="group"
        aria-label="Tokens: arrow keys read them one by one"
        data-testid="token-strip"
      >
        {series.tokens.slice(start, end).map((token, offset) => {
          const i = start + offset;
          const value = values[i];
          const masked = lossMask ? !lossMask[i] : false;
          return (
            <span
              key={i}
              data-index={i}
              data-masked={masked || undefined}
              className={`${styles.token} ${masked ? styles.masked : ""} ${i === hovered ? styles.current : ""}`}
              style={masked ? undefined : { background: colorOf(scale, value), color: textColorOf(scale, value) }}
              title={masked ? MASKED_LEGEND : `${metric} ${value ?? "–"}`}
            >
              {visibleToken(token)}
            </span>
          );
        })}
      </div>
    </section>
  );
}
