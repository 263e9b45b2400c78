/** A dependency-free SVG line chart (prompt tokens per turn), readable on GitHub in light and dark mode. */

export interface Series {
  name: string;
  color: string;
  values: readonly number[];
}

export interface LineChart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
  /** x positions (1-based) to mark with a small tick under the axis, e.g. compactions. */
  markers?: { name: string; color: string; at: readonly number[] };
  width?: number;
  height?: number;
}

function niceStep(range: number, ticks: number): number {
  const raw = range / ticks;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const normalized = raw / magnitude;
  const nice = normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10;
  return nice * magnitude;
}

const escapeText = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

export function renderLineChart(chart: LineChart): string {
  const width = chart.width ?? 820;
  const height = chart.height ?? 420;
  const margin = { left: 78, right: 24, top: 48, bottom: 74 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const points = Math.max(...chart.series.map((series) => series.values.length), 2);
  const maximum = Math.max(...chart.series.flatMap((series) => series.values), 1);
  const yStep = niceStep(maximum, 6);
  const yTop = Math.ceil(maximum / yStep) * yStep;
  const x = (index: number) => margin.left + (index / (points - 1)) * plotWidth;
  const y = (value: number) => margin.top + plotHeight - (value / yTop) * plotHeight;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="600" fill="#1f2328">${escapeText(chart.title)}</text>`,
  ];
  for (let value = 0; value <= yTop; value += yStep) {
    const position = y(value);
    parts.push(
      `<line x1="${margin.left}" x2="${width - margin.right}" y1="${position}" y2="${position}" stroke="#d0d7de" stroke-width="1"/>`,
      `<text x="${margin.left - 8}" y="${position + 4}" text-anchor="end" fill="#57606a">${value.toLocaleString('en-US')}</text>`,
    );
  }
  const xStep = niceStep(points, 10);
  for (let turn = xStep; turn <= points; turn += xStep) {
    parts.push(
      `<text x="${x(turn - 1)}" y="${margin.top + plotHeight + 18}" text-anchor="middle" fill="#57606a">${turn}</text>`,
    );
  }
  parts.push(
    `<line x1="${margin.left}" x2="${width - margin.right}" y1="${margin.top + plotHeight}" y2="${margin.top + plotHeight}" stroke="#57606a"/>`,
    `<text x="${margin.left + plotWidth / 2}" y="${height - 30}" text-anchor="middle" fill="#1f2328">${escapeText(chart.xLabel)}</text>`,
    `<text transform="translate(18 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle" fill="#1f2328">${escapeText(chart.yLabel)}</text>`,
  );
  if (chart.markers) {
    for (const at of chart.markers.at) {
      const position = x(at - 1);
      parts.push(
        `<line x1="${position}" x2="${position}" y1="${margin.top + plotHeight + 2}" y2="${margin.top + plotHeight + 8}" stroke="${chart.markers.color}" stroke-width="1.5"/>`,
      );
    }
  }
  for (const series of chart.series) {
    const path = series.values
      .map((value, index) => `${x(index).toFixed(1)},${y(value).toFixed(1)}`)
      .join(' ');
    parts.push(`<polyline fill="none" stroke="${series.color}" stroke-width="1.8" points="${path}"/>`);
  }
  const legend = [
    ...chart.series.map((series) => ({ name: series.name, color: series.color })),
    ...(chart.markers ? [{ name: chart.markers.name, color: chart.markers.color }] : []),
  ];
  legend.forEach((entry, index) => {
    const left = margin.left + index * 250;
    parts.push(
      `<rect x="${left}" y="${height - 16}" width="14" height="4" fill="${entry.color}"/>`,
      `<text x="${left + 20}" y="${height - 11}" fill="#1f2328">${escapeText(entry.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
