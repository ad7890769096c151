import { useLayoutEffect, useRef, useState, type ReactNode } from "react";

const MARGIN_PX = 200; // mounted this far before it scrolls into view

/**
 * Renders its children only once scrolled near the viewport (IntersectionObserver),
 * and keeps them mounted after: a grid of 40 charts mounts the few on screen, not all.
 * The children get the slot's width then (what a chart downsamples its data to). A slot
 * already on screen mounts in the same commit as the grid, not a frame later.
 */
export function LazyMount({ height, children }: { height: number; children: (width: number) => ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState<number | null>(null);
  useLayoutEffect(() => {
    const element = ref.current;
    if (width !== null || !element) return undefined;
    if (typeof IntersectionObserver === "undefined" || onScreen(element)) {
      setWidth(element.clientWidth);
      return undefined;
    }
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          setWidth(element.clientWidth);
          observer.disconnect();
        }
      },
      { rootMargin: `${MARGIN_PX}px` },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [width]);
  return (
    <div ref={ref} style={{ minHeight: height }}>
      {width !== null ? children(width) : null}
    </div>
  );
}

function onScreen(element: HTMLElement): boolean {
  const box = element.getBoundingClientRect();
  if (!box.width && !box.height) return false; // not laid out (a hidden tab)
  return box.top < innerHeight + MARGIN_PX && box.bottom > -MARGIN_PX && box.left < innerWidth && box.right > 0;
}
