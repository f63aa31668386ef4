// Figures, each with its same-run baseline, ratio, target and verdict, printed as one table.

/** The most CPU other programs used in the phases behind a figure (cores); near 0 = trustworthy. */
function noiseOf(phases) {
  const values = phases.map((p) => p?.others).filter((v) => Number.isFinite(v));
  return values.length ? Math.max(...values).toFixed(2) : '—';
}

export const fmt = {
  int: (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a'),
  ms: (v) => (Number.isFinite(v) ? `${v.toFixed(v < 10 ? 2 : 1)} ms` : 'n/a'),
  mb: (v) => (Number.isFinite(v) ? `${(v / 1048576).toFixed(1)} MB` : 'n/a'),
  s: (v) => (Number.isFinite(v) ? `${v.toFixed(2)} s` : 'n/a'),
  ratio: (v) => (Number.isFinite(v) ? `${v.toFixed(v < 10 ? 2 : 1)}×` : 'n/a'),
};

/**
 * row: { figure, value, unit formatter, baselineName, baseline, target: { text, pass(value, ratio) } }
 * The ratio is always value ÷ baseline.
 */
export class Report {
  rows = [];

  add({ figure, value, show = fmt.int, baselineName, baseline, showBaseline = show, target, noise = [] }) {
    const ratio = value / baseline;
    let verdict = '';
    if (target) verdict = target.pass(value, ratio) ? 'PASS' : 'MISS';
    this.rows.push({
      figure,
      value: show(value),
      baseline: `${showBaseline(baseline)} (${baselineName})`,
      ratio: fmt.ratio(ratio),
      target: target?.text ?? '—',
      verdict: verdict || '—',
      noise: noiseOf(noise),
      raw: { value, baseline, ratio },
    });
    return ratio;
  }

  /** A yes/no check (durability) shown in the same table. */
  check({ figure, ok, detail, target = 'all durable' }) {
    this.rows.push({ figure, value: detail, baseline: '—', ratio: '—', target, verdict: ok ? 'PASS' : 'MISS', noise: '—' });
  }

  table() {
    const head = ['figure', 'value', 'baseline (same run)', 'ratio', 'target', 'result', 'other CPU'];
    const cells = this.rows.map((r) => [r.figure, r.value, r.baseline, r.ratio, r.target, r.verdict, r.noise]);
    const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => String(c[i]).length)));
    const line = (c) => `| ${c.map((x, i) => String(x).padEnd(widths[i])).join(' | ')} |`;
    return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
  }
}
