import type { LoadSample } from '../../../shared/simulation.contract';
import { linePath, niceMax, ratesOf, type RatePoint } from '../../stores/load-model';

// Two small inline-SVG charts (no chart library): outcomes per second, and delivery latency.

const W = 640;
const H = 150;
const PAD = { l: 44, r: 8, t: 8, b: 20 };

interface Series {
  key: keyof RatePoint;
  label: string;
  cls: string;
}

function Chart({ points, series, unit, title, testId }: { points: RatePoint[]; series: Series[]; unit: string; title: string; testId: string }) {
  const tMax = Math.max(1, ...points.map((p) => p.t));
  const yMax = niceMax(Math.max(0, ...points.flatMap((p) => series.map((s) => (p[s.key] as number | null) ?? 0))));
  const sx = (t: number) => PAD.l + (t / tMax) * (W - PAD.l - PAD.r);
  const sy = (v: number) => H - PAD.b - (v / yMax) * (H - PAD.t - PAD.b);
  const ticks = [0, yMax / 2, yMax];
  return (
    <figure className="load-chart" data-testid={testId} data-points={points.length}>
      <figcaption className="row">
        <b>{title}</b>
        {series.map((s) => (
          <span key={s.key} className="inline small-text">
            <span className={`swatch ${s.cls}`} /> {s.label}
          </span>
        ))}
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title} preserveAspectRatio="none">
        {ticks.map((v) => (
          <g key={v}>
            <line className="grid" x1={PAD.l} x2={W - PAD.r} y1={sy(v)} y2={sy(v)} />
            <text className="axis" x={PAD.l - 4} y={sy(v) + 3} textAnchor="end">
              {Number.isInteger(v) ? v : v.toFixed(1)}
              {v === yMax ? ` ${unit}` : ''}
            </text>
          </g>
        ))}
        <text className="axis" x={W - PAD.r} y={H - 4} textAnchor="end">
          {tMax.toFixed(0)} s
        </text>
        <text className="axis" x={PAD.l} y={H - 4}>
          0 s
        </text>
        {series.map((s) => (
          <path key={s.key} className={`line ${s.cls}`} d={linePath(points.map((p) => ({ x: p.t, y: p[s.key] as number | null })), sx, sy)} />
        ))}
      </svg>
    </figure>
  );
}

export function LoadCharts({ samples }: { samples: LoadSample[] }) {
  const points = ratesOf(samples);
  if (points.length === 0) return <div className="muted small-text">The charts start with the first sample (after about a second).</div>;
  return (
    <div className="load-charts">
      <Chart
        testId="chart-outcomes"
        title="Outcomes per second"
        unit="/s"
        points={points}
        series={[
          { key: 'accepted', label: 'accepted', cls: 's-accepted' },
          { key: 'delivered', label: 'delivered', cls: 's-delivered' },
          { key: 'failed', label: 'failed/expired', cls: 's-failed' },
          { key: 'retrying', label: 'retrying (now)', cls: 's-retrying' },
        ]}
      />
      <Chart
        testId="chart-latency"
        title="Delivery latency"
        unit="ms"
        points={points}
        series={[
          { key: 'p50', label: 'p50', cls: 's-p50' },
          { key: 'p99', label: 'p99', cls: 's-p99' },
        ]}
      />
    </div>
  );
}
