// Web mode: ask for the inspector's first page, and read its body, while the app bundle is still
// downloading and starting, so the rows are there for React's first render. Plain JS in public/ so
// it is served as is, ahead of the bundle; the HTTP transport answers its first listMessages call
// with that input from it (api/early-request.ts). The URL and headers must be the ones the transport
// would send: tests/unit/renderer-early-request.test.ts runs this file against the transport's code.
(() => {
  if (window.webhookLab || !/^https?:$/.test(location.protocol)) return; // desktop app: IPC, no HTTP API
  if (location.hash.replace(/^#\/?/, '').split(/[/?]/)[0] !== 'inspector') return;
  const token = new URL(location.href).searchParams.get('token') || sessionStorage.getItem('webhook-lab.token');
  if (!token) return;
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  window.__webhookLabEarly = {
    op: 'listMessages',
    input: { limit: 100 },
    answer: fetch('/api/messages?limit=100', { method: 'GET', headers, priority: 'high' }).then(async (res) => ({ status: res.status, body: await res.text() })),
  };
})();
