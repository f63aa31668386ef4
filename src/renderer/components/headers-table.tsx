/** Header names and values as a two-column table; "none" when there are none. */
export function HeadersTable({ headers }: { headers: Record<string, string> | null }) {
  if (!headers || Object.keys(headers).length === 0) return <div className="muted">none</div>;
  return (
    <table className="kv">
      <tbody>
        {Object.entries(headers).map(([k, v]) => (
          <tr key={k}>
            <th>{k}</th>
            <td>{v}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
