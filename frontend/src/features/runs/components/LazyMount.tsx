import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * Renders its children only once scrolled near the viewport (IntersectionObserver),
 * and keeps them mounted after: a grid of 40 charts mounts the few on screen, not all.
 * The children get the slot's width then (what a chart downsamples its data to).
 */
export function LazyMount({ height, children }: { height: number; children: (width: number) => ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState<number | null>(null);
  useEffect(() => {
    const element = ref.current;
    if (width !== null || !element) return undefined;
    if (typeof IntersectionObserver === "undefined") {
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
      { rootMargin: "200px" },
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
