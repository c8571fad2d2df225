import { TableScroll } from './components.tsx';

/**
 * One day of a chart: its date (YYYY-MM-DD), the bar's value and how the value reads; `happened`
 * says whether the day is listed in the figures below the chart (default: a value above zero).
 */
export type ChartDay = { day: string; value: bigint; label: string; happened?: boolean };

const WIDTH = 600;
const HEIGHT = 120;
const BOTTOM = 16;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const short = (day: string) => `${Number(day.slice(8, 10))} ${MONTHS[Number(day.slice(5, 7)) - 1]}`;

/**
 * A bar per day, drawn on the server as SVG (no script, no inline style: classes and presentation
 * attributes only). Each bar has a title (shown on hover); the whole has a text summary for screen
 * readers, and the days' figures follow as a table behind a disclosure (`figures`: its column's
 * heading). Bigint values are scaled against the largest, so no amount passes through a float.
 */
export function BarChart({
  days,
  summary,
  figures,
}: {
  days: ChartDay[];
  summary: string;
  figures?: string;
}): JSX.Element {
  return (
    <>
      <Bars days={days} summary={summary} />
      {figures ? <DayFigures days={days} heading={figures} summary={summary} /> : ''}
    </>
  );
}

function DayFigures({ days, heading, summary }: { days: ChartDay[]; heading: string; summary: string }) {
  const listed = days.filter((d) => d.happened ?? d.value > 0n);
  return (
    <details class="chart-figures">
      <summary>Figures by day</summary>
      {listed.length === 0 ? (
        <p class="muted small">Nothing in these 30 days.</p>
      ) : (
        <TableScroll label={summary}>
          <table>
            <thead>
              <tr>
                <th>Day</th>
                <th class="amount" safe>
                  {heading}
                </th>
              </tr>
            </thead>
            <tbody>
              {listed.map((d) => (
                <tr>
                  <td class="nowrap" safe>
                    {short(d.day)}
                  </td>
                  <td class="amount" safe>
                    {d.label}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </details>
  );
}

function Bars({ days, summary }: { days: ChartDay[]; summary: string }): JSX.Element {
  const max = days.reduce((m, d) => (d.value > m ? d.value : m), 0n);
  const slot = WIDTH / Math.max(days.length, 1);
  const barWidth = Math.max(2, slot * 0.68);
  const plot = HEIGHT - BOTTOM;
  return (
    <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={summary}>
      <line class="gridline" x1="0" x2={String(WIDTH)} y1={String(plot)} y2={String(plot)} />
      {days.map((d, i) => {
        // Per mille of the tallest bar, in bigint; a day with anything shows at least a sliver.
        const share = max === 0n ? 0 : Number((d.value * 1000n) / max) / 1000;
        const h = d.value > 0n ? Math.max(2, share * (plot - 4)) : 2;
        const x = i * slot + (slot - barWidth) / 2;
        return (
          <rect
            class={d.value > 0n ? 'bar' : 'bar-empty'}
            x={x.toFixed(1)}
            y={(plot - h).toFixed(1)}
            width={barWidth.toFixed(1)}
            height={h.toFixed(1)}
            rx="1.5"
          >
            <title safe>{`${short(d.day)}: ${d.label}`}</title>
          </rect>
        );
      })}
      {days.length > 0 ? (
        <>
          <text class="axis" x="0" y={String(HEIGHT - 2)} safe>
            {short(days[0]!.day)}
          </text>
          <text class="axis" x={String(WIDTH)} y={String(HEIGHT - 2)} text-anchor="end" safe>
            {short(days.at(-1)!.day)}
          </text>
        </>
      ) : (
        ''
      )}
    </svg>
  );
}
